#!/bin/sh
# docs/render.sh [BUILD]: redraw the example charts of docs/README.md with
# BUILD/efplan (default build/) and render them to PNG with rsvg-convert
# (Debian librsvg2-bin), then shrink them with pngquant (Debian pngquant)
# when it is there, saying so when not. Run from the repository root;
# writes docs/*.png.
set -eu
E=${1:-build}/efplan
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
I=inputs
"$E" plan --jobs docs/wall-clock-jobs.json --cluster n2g8 --curves A100 \
    --svg "$T/plan-wall-clock.svg" >/dev/null
"$E" plan --jobs $I/jobs/sample.json --cluster n4g8 --curves A100 \
    --svg "$T/plan-sample.svg" >/dev/null
"$E" plan --jobs $I/traces/itp/cluster09.csv --cluster n64g8 --curves A100 \
    --svg "$T/plan-cluster09.svg" >/dev/null
"$E" simulate --trace $I/traces/itp/cluster10.csv --cluster n8g8 \
    --curves A100 --policy ef --svg "$T/simulate-cluster10.svg" >/dev/null
"$E" compare --traces $I/traces/itp/cluster10.csv,$I/traces/itp/195job.csv \
    --cluster-for 195job=n4g8 --policies ef,edf,gandiva,tiresias \
    --svg "$T/compare.svg" >/dev/null
command -v pngquant >/dev/null ||
    echo "render.sh: no pngquant: the PNGs stay full colour (about 3x larger)"
for f in "$T"/*.svg; do
    png=docs/$(basename "$f" .svg).png
    rsvg-convert "$f" -o "$png"
    if command -v pngquant >/dev/null; then
        pngquant --quality 70-95 --speed 1 --force --output "$png.q" "$png"
        mv "$png.q" "$png"
    fi
done
ls -l docs/*.png
