#!/bin/sh
# End-to-end: every chart efplan draws is well-formed SVG that a real
# renderer (rsvg-convert, Debian librsvg2-bin, installed by make deps)
# turns into a PNG of the chart's size that is not blank, and says what a
# person needs to read it:
# - plan, a small queue on the wall clock (2 nodes): blocks labelled
#   "id (N GPUs)", a legend, node labels, "HH:MM" ticks with the date and
#   "time (UTC)", deadlines past the plan as arrows with their time, the
#   rejected job with its reason, ids escaped for XML;
# - plan, the bundled sample (32 jobs): hour ticks, the top 20 jobs in
#   colour and "others", byte-identical for OMP_NUM_THREADS=1 and 4;
# - plan, 10 jobs on 128 nodes: nodes too thin for a label go in groups;
# - plan, the bundled cluster09 trace (11,134 jobs on n64g8): stacked
#   bands of GPUs in use, a deadline histogram, the rejected list cut with
#   a count, under 1 MB;
# - simulate (cluster10, ef): both y axes with ticks on both panels;
# - compare (two traces x two policies): a bar per cell with its ratio
#   (the value of --out), the legend, the ratio axis; the same bytes with
#   one thread.
# The PNG checker is shown to flag a blank chart.
. "$(dirname "$0")/lib/common.sh"

command -v rsvg-convert >/dev/null ||
    fail "rsvg-convert is missing (Debian librsvg2-bin: make deps installs it)"
command -v python3 >/dev/null || fail "python3 is missing (make deps)"

# check.py SVG PNG: the SVG parses as XML with width and height; the PNG
# (8-bit RGB or RGBA, as rsvg-convert writes) has that size and more than
# 2% of its pixels not white, in more than 4 colours
cat >"$T/check.py" <<'EOF'
import struct, sys, zlib
import xml.etree.ElementTree as ET
svg, png = sys.argv[1], sys.argv[2]
root = ET.parse(svg).getroot()
assert root.tag.endswith('svg'), 'root is not <svg>'
w, h = int(root.get('width')), int(root.get('height'))
data = open(png, 'rb').read()
assert data[:8] == b'\x89PNG\r\n\x1a\n', 'not a PNG'
pos, idat, hdr = 8, b'', None
while pos < len(data):
    n, kind = struct.unpack('>I4s', data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b'IHDR':
        hdr = struct.unpack('>IIBBBBB', body)
    elif kind == b'IDAT':
        idat += body
    pos += 12 + n
pw, ph, depth, ctype = hdr[0], hdr[1], hdr[2], hdr[3]
assert (pw, ph) == (w, h), 'PNG is %dx%d, SVG %dx%d' % (pw, ph, w, h)
assert depth == 8 and ctype in (2, 6), 'PNG depth %d type %d' % (depth, ctype)
bpp = 4 if ctype == 6 else 3
raw, stride = zlib.decompress(idat), pw * bpp
prev, rows = bytearray(stride), []
for y in range(ph):
    f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = line[i - bpp] if i >= bpp else 0
        b, c = prev[i], prev[i - bpp] if i >= bpp else 0
        if f == 1: line[i] = (line[i] + a) & 255
        elif f == 2: line[i] = (line[i] + b) & 255
        elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    rows.append(bytes(line))
    prev = line
inked, colours = 0, set()
for line in rows[::2]:
    for x in range(0, stride, bpp * 2):
        px = line[x:x + 3]
        colours.add(px)
        inked += px != b'\xff\xff\xff'
total = len(rows[::2]) * len(range(0, stride, bpp * 2))
assert inked > total * 0.02 and len(colours) > 4, \
    'blank: %d of %d pixels inked, %d colours' % (inked, total, len(colours))
print('%s: %dx%d, %.1f%% inked, %d colours' % (png, pw, ph, 100.0 * inked / total, len(colours)))
EOF

# render NAME: $T/NAME.svg to $T/NAME.png, checked
render() {
    rsvg-convert "$T/$1.svg" -o "$T/$1.png" 2>"$T/$1.rsvg" ||
        fail "$1: rsvg-convert failed: $(cat "$T/$1.rsvg")"
    python3 "$T/check.py" "$T/$1.svg" "$T/$1.png" >"$T/$1.check" 2>&1 ||
        fail "$1: $(tail -1 "$T/$1.check")"
}
# has NAME TEXT...: the chart NAME shows every TEXT as a whole text element
has() {
    _n=$1; shift
    for _k in "$@"; do
        grep -qF ">$_k</text>" "$T/$_n.svg" || fail "$_n: no text \"$_k\""
    done
}
# contains NAME TEXT...: the chart NAME holds every TEXT somewhere
contains() {
    _n=$1; shift
    for _k in "$@"; do
        grep -qF -- "$_k" "$T/$_n.svg" || fail "$_n: lacks \"$_k\""
    done
}

# the checker flags a blank chart
printf '<svg xmlns="http://www.w3.org/2000/svg" width="300" height="200">%s</svg>\n' \
    '<rect width="100%" height="100%" fill="white"/><text x="5" y="15">x</text>' \
    >"$T/blank.svg"
rsvg-convert "$T/blank.svg" -o "$T/blank.png" || fail "blank: rsvg-convert failed"
if python3 "$T/check.py" "$T/blank.svg" "$T/blank.png" >"$T/blank.check" 2>&1; then
    fail "the PNG checker passed a blank chart"
fi
grep -q "blank:" "$T/blank.check" || fail "blank: $(tail -1 "$T/blank.check")"

# 1. a small plan on the wall clock
cat >"$T/wall.json" <<'EOF'
{"format": "efplan-jobs", "version": 1, "jobs": [
 {"id": "train-bert", "model": "bert", "batch_size": 64, "iterations": 20000, "submit_time": 1780000000, "deadline": 1780012000},
 {"id": "resnet<&>", "model": "resnet50", "batch_size": 128, "iterations": 60000, "submit_time": 1780000000, "deadline": 1780030000},
 {"id": "vgg-late", "model": "vgg16", "batch_size": 128, "iterations": 20000, "submit_time": 1780001800, "deadline": 1780300000},
 {"id": "gpt2-tight", "model": "gpt2", "batch_size": 128, "iterations": 500000, "submit_time": 1780000600, "deadline": 1780003600},
 {"id": "ds2-best", "model": "deepspeech2", "batch_size": 32, "iterations": 30000, "submit_time": 1780000000, "deadline": null},
 {"id": "incep", "model": "inception3", "batch_size": 64, "iterations": 30000, "submit_time": 1780003600, "deadline": 1780020000}
]}
EOF
$V "$EFPLAN" plan --jobs "$T/wall.json" --cluster n2g8 --curves A100 \
    --earliest exact --svg "$T/wall.svg" >"$T/wall.out" ||
    fail "wall: plan failed"
render wall
has wall "node 0" "node 1" "20:30" "22:00" "2026-05-28" "time (UTC)" \
    "resnet&lt;&amp;&gt; (8 GPUs)" "train-bert (4 GPUs)" \
    "vgg-late 2026-06-01 07:46" \
    "ds2-best (deepspeech2), 4.5 GPU-h, best-effort" \
    "rejected (1): not admitted, their deadlines cannot be promised"
contains wall ">gpt2-tight (gpt2): deadline too tight" \
    "earliest deadline possible 2026-05-29 03:45</text>" \
    "incep (inception3), 8.8 GPU-h, deadline 2026-05-29 02:00</text>"
# every deadline is past 1.5 times the plan's length: four arrows, no line
[ "$(grep -c '<path d="M[0-9.]* [0-9.]* l8 -4 l-8 -4 Z"' "$T/wall.svg")" = 4 ] ||
    fail "wall: expected 4 deadline arrows"

# 2. the bundled sample: hours, colours and others, deterministic
for n in 1 4; do
    OMP_NUM_THREADS=$n $V "$EFPLAN" plan --jobs "$D/jobs/sample.json" \
        --cluster n4g8 --curves A100 --svg "$T/sample$n.svg" >/dev/null ||
        fail "sample: plan failed ($n threads)"
done
cmp -s "$T/sample1.svg" "$T/sample4.svg" ||
    fail "sample: chart differs between 1 and 4 threads"
mv "$T/sample1.svg" "$T/sample.svg"
render sample
has sample "0h" "2h" "14h" "time from the start" "node 3" \
    "efplan plan: 32 jobs on n4g8 (4 nodes x 8 GPUs)" \
    "others: 8 jobs, 10.5 GPU-h" "deadline (admitted job)"
contains sample ">j22 (gpt2), 44.3 GPU-h, deadline +15h 59m</text>" \
    ">j09 (8 GPUs)</text>" "<title>deadline of j00: +11m 33s</title>" \
    ">j01 (inception3): deadline too tight"
# every admitted job's deadline is marked (24 admitted)
[ "$(grep -c '<title>deadline of ' "$T/sample.svg")" = 24 ] ||
    fail "sample: $(grep -c '<title>deadline of ' "$T/sample.svg") deadline marks (expected 24)"

# 2b. few jobs on many nodes: nodes in labelled groups of 5
$V "$EFPLAN" plan --jobs "$D/jobs/oracle10.json" --cluster n128g8 \
    --curves A100 --svg "$T/wide.svg" >/dev/null || fail "wide: plan failed"
render wide
has wide "0-4" "125-127" "nodes (8 GPUs each)" "big (64 GPUs)"

# 3. a cluster09-sized plan: summarised, not a wall of lines
$V "$EFPLAN" plan --jobs "$D/traces/itp/cluster09.csv" --cluster n64g8 \
    --curves A100 --svg "$T/c09.svg" >/dev/null || fail "c09: plan failed"
render c09
has c09 "GPUs in use" "0d" "49d" "deadlines" "0%" "100%" "500" \
    "rejected (42): not admitted, their deadlines cannot be promised" \
    "... and 30 more (efplan plan --all lists every job)"
contains c09 ">others: 11072 jobs, " "large plan: GPUs in use, stacked by job"
[ "$(grep -c '<title>deadline of ' "$T/c09.svg")" -le 20 ] ||
    fail "c09: more deadline lines than coloured jobs"
[ "$(wc -c <"$T/c09.svg")" -lt 1000000 ] || fail "c09: chart over 1 MB"

# 4. simulate
$V "$EFPLAN" simulate --trace "$D/traces/itp/cluster10.csv" --cluster n8g8 \
    --curves A100 --policy ef --svg "$T/sim.svg" >/dev/null ||
    fail "sim: simulate failed"
render sim
has sim "GPUs in use" "Deadlines met so far (of 260 deadline jobs)" \
    "GPUs" "jobs" "% of the cluster" "% of deadline jobs" \
    "0" "20" "60" "250" "0%" "40%" "100%" "0d" "32d" "time from the start" \
    "GPUs in use (top panel)"

# 5. compare
$V "$EFPLAN" compare --traces "$D/traces/itp/cluster10.csv,$D/traces/itp/195job.csv" \
    --cluster-for 195job=n4g8 --policies ef,edf --out "$T/cmp.json" \
    --svg "$T/cmp.svg" >/dev/null || fail "cmp: compare failed"
render cmp
OMP_NUM_THREADS=1 $V "$EFPLAN" compare --traces "$D/traces/itp/cluster10.csv,$D/traces/itp/195job.csv" \
    --cluster-for 195job=n4g8 --policies ef,edf --svg "$T/cmp1.svg" >/dev/null ||
    fail "cmp: compare failed (1 thread)"
cmp -s "$T/cmp.svg" "$T/cmp1.svg" || fail "cmp: chart differs with 1 thread"
has cmp "ef" "edf" "cluster10" "195job" "n32g8, 256 GPUs" "n4g8, 32 GPUs" \
    "0" "0.2" "1" "deadline-satisfactory ratio" "trace (cluster)"
for v in $(python3 -c 'import json,sys
for c in json.load(open(sys.argv[1]))["cells"]: print("%.2f" % c["deadline_ratio"])' "$T/cmp.json"); do
    has cmp "$v"
done
[ "$(grep -c '<title>published: ' "$T/cmp.svg")" = 2 ] ||
    fail "cmp: expected the 2 published numbers of cluster10 marked"
# --svg - prints the chart (the table goes to standard error); with
# --markdown - as well it is a usage error
$V "$EFPLAN" compare --traces "$D/traces/itp/cluster10.csv" --policies edf \
    --svg "$T/dash.svg" >/dev/null 2>&1 || fail "compare --svg FILE failed"
$V "$EFPLAN" compare --traces "$D/traces/itp/cluster10.csv" --policies edf \
    --svg - >"$T/dash.out" 2>"$T/dash.err" || fail "compare --svg - failed"
cmp -s "$T/dash.svg" "$T/dash.out" || fail "compare --svg - did not print the chart"
grep -q "edf" "$T/dash.err" || fail "compare --svg -: no table on stderr"
rc=0
$V "$EFPLAN" compare --traces "$D/traces/itp/cluster10.csv" --policies edf \
    --svg - --markdown - >/dev/null 2>"$T/dash.err" || rc=$?
[ "$rc" = 2 ] || fail "compare --svg - --markdown -: exit $rc (expected 2)"
grep -q "both write standard output" "$T/dash.err" ||
    fail "compare --svg - --markdown -: $(cat "$T/dash.err")"
echo "charts: ok ($(cat "$T"/*.check | tr '\n' ';'))"
