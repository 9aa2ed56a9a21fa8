#!/usr/bin/env python3
"""tests/e2e/lib/doctest.py: run the examples of Markdown documents and
compare what they print with what the documents show.

    doctest.py --root ROOT --efplan BIN [--timeout S] [--keep] [--show]
               [--update]
               [--list] FILE.md ...

The convention (docs/conventions.md, "Examples in these documents"):

- A runnable example is a fenced block whose info string is `console`.
  A line starting with `$ ` is a command; a command line ending with a
  backslash goes on on the next line. The lines after a command, up to
  the next `$ ` line or the end of the block, are what it prints
  (standard output and standard error together, in the order a
  terminal shows them when both are line by line).
- A line `...` in the expected output matches any number of lines
  (none included); `...` inside a line matches any text on that line.
- Before comparing, both sides are masked: temporary paths, dates and
  times (ISO-8601, times of day, dated snapshot names, Unix seconds),
  durations measured on the wall clock (a decimal number of seconds or
  milliseconds) and any duration after "in", "at", "after" or "took",
  token ids (efp_...), loopback ports and process ids. Trailing blanks
  and trailing empty lines are ignored.
- The blocks of one document run in order in one bash shell, in a
  scratch directory that holds a copy of the repository's files (not
  build/ or .git; build/efplan is the binary under test),
  with efplan on PATH, TZ=UTC, LC_ALL=C and no EFPLAN_* variables. State carries over: a file an earlier block wrote is
  there later; an exported variable stays set. Each document gets a
  scratch directory of its own. What a document leaves running in the
  background is stopped when its last command has run.
- A fence of another kind (sh, json, text, ...) is not run; a line
  starting with `$ ` in one is an error (a runnable example in the wrong
  fence would never be checked).

Exit status: 0 every example printed what its document shows; 1 one or
more did not (each is reported with its file, line, command and a diff of
the masked texts); 2 usage or a document the parser refuses.
"""

import argparse
import difflib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile

FENCE = re.compile(r'^(\s{0,3})(`{3,}|~{3,})\s*([^\s`]*)')


class DocError(Exception):
    pass


class Example:
    def __init__(self, path, line, command, expected):
        self.path = path          # the document
        self.line = line          # the line of its `$ ` (from 1)
        self.command = command    # the command, continuation lines joined
        self.expected = expected  # the lines it shows (list of str)
        self.after = line         # the document line its output follows
        self.indent = ''          # the fence's indent


def parse(path, text):
    """The examples of one document, in order. Raises DocError for a
    `$ ` line outside a console fence or an unclosed fence."""
    examples = []
    lines = text.split('\n')
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, marker, info = m.group(1), m.group(2), m.group(3)
        start = i
        body = []
        i += 1
        closed = False
        while i < len(lines):
            s = lines[i].strip()
            if s.startswith(marker[0] * len(marker)) and \
                    s.strip(marker[0]) == '':
                closed = True
                break
            body.append((i + 1, lines[i][len(indent):]
                         if lines[i].startswith(indent) else lines[i]))
            i += 1
        if not closed:
            raise DocError('%s:%d: fence never closed' % (path, start + 1))
        i += 1
        if info != 'console':
            for n, b in body:
                if b.startswith('$ '):
                    raise DocError(
                        '%s:%d: a command ("$ ...") in a fence of kind "%s": '
                        'runnable examples go in ```console fences (a '
                        'command shown elsewhere is never checked)'
                        % (path, n, info or 'none'))
            continue
        cur = None
        cont = False
        for n, b in body:
            if cont:
                cur.command += '\n' + b
                cur.after = n
                cont = b.endswith('\\')
                continue
            if b.startswith('$ '):
                cur = Example(path, n, b[2:], [])
                cur.indent = indent
                examples.append(cur)
                cont = b.endswith('\\')
            elif cur is None:
                if b.strip():
                    raise DocError('%s:%d: output before the first command '
                                   'of a console block' % (path, n))
            else:
                cur.expected.append(b)
        if cont:
            raise DocError('%s:%d: a command ends with a backslash at the '
                           'end of its block' % (path, cur.line))
    return examples


_DUR = r'\d+(?:\.\d+)?\s?(?:ms|us|µs|s|m|h|d|w)\b'
MASKS = [
    # temporary paths (before anything that could match inside them)
    (re.compile(r'(?:/var)?/tmp/[^\s\'":,;)\]}]*'), '<TMP>'),
    (re.compile(r'\b\d{4}-\d\d-\d\d[T ]\d\d:\d\d(?::\d\d(?:\.\d+)?)?'
                r'(?:Z|[+-]\d\d:?\d\d)?'), '<TIME>'),
    (re.compile(r'\b\d{8}T\d{6}Z'), '<TIME>'),
    (re.compile(r'\b\d{4}-\d\d-\d\d\b'), '<DATE>'),
    (re.compile(r'\b(127\.0\.0\.1|localhost|\[::1\]):\d+'), r'\1:<PORT>'),
    (re.compile(r'\b\d{1,2}:\d\d(?::\d\d)?\b'), '<TIME>'),
    (re.compile(r'\b1\d{9}\b'), '<UNIX>'),
    (re.compile(r'\b(in|at|after|took) ' + _DUR + r'(?: ' + _DUR + r')*'),
     r'\1 <DUR>'),
    (re.compile(r'\b\d+\.\d+\s?(?:ms|us|µs|s)\b'), '<DUR>'),
    (re.compile(r'efp_[a-z0-9]{10}(?:_[A-Za-z0-9_-]{43})?'), 'efp_<TOKEN>'),
    # a token's id opening a line of `token list` (a column: two blanks)
    (re.compile(r'^[a-z0-9]{10}(?=  )', re.M), '<TOKEN>'),
    (re.compile(r'\bpid[ =:]+\d+'), 'pid <PID>'),
    (re.compile(r'"pid": \d+'), '"pid": <PID>'),
]


def mask(text, scratch, roots=()):
    """The text with what changes from run to run masked: the scratch
    copy's paths read /tmp/docs (then <TMP>, as every temporary path), the
    repository's own paths <ROOT> (so that a checkout under /tmp, say one
    made by mktemp -d, is not read as a temporary path: a document shows
    those paths as `.../inputs/...`), then MASKS."""
    for d in scratch:
        text = text.replace(d, '/tmp/docs')
    for d in roots:
        text = text.replace(d, '<ROOT>')
    for rx, repl in MASKS:
        text = rx.sub(repl, text)
    return text


def normalise(lines):
    out = [l.rstrip() for l in lines]
    while out and out[-1] == '':
        out.pop()
    return out


def line_rx(exp):
    parts = exp.split('...')
    return re.compile('^' + '.*'.join(re.escape(p) for p in parts) + '$')


def matches(expected, actual):
    """True when the masked actual lines match the masked expected ones,
    `...` lines matching any number of lines."""
    pats = [None if e.strip() == '...' else line_rx(e) for e in expected]
    memo = {}

    def go(i, j):
        key = (i, j)
        if key in memo:
            return memo[key]
        if i == len(pats):
            r = j == len(actual)
        elif pats[i] is None:
            r = any(go(i + 1, k) for k in range(j, len(actual) + 1))
        else:
            r = j < len(actual) and bool(pats[i].match(actual[j])) and \
                go(i + 1, j + 1)
        memo[key] = r
        return r
    return go(0, 0)


def scratch_dir(root, efplan):
    """A copy of the repository's files (not build/, build-*/ or .git),
    so that an example that writes (submit rewrites a queue's jobs file)
    never changes the repository; build/efplan is the binary under test."""
    d = tempfile.mkdtemp(prefix='efplan-docs.')
    skip = shutil.ignore_patterns('.git', '*.o', '*.d')
    for name in sorted(os.listdir(root)):
        if name in ('.git', 'build') or name.startswith('build-'):
            continue
        src = os.path.join(root, name)
        dst = os.path.join(d, name)
        if os.path.isdir(src) and not os.path.islink(src):
            shutil.copytree(src, dst, symlinks=True, ignore=skip)
        else:
            shutil.copy2(src, dst, follow_symlinks=False)
    os.mkdir(os.path.join(d, 'build'))
    os.symlink(efplan, os.path.join(d, 'build', 'efplan'))
    return d


def script_for(examples, outdir):
    s = ['set +e', 'exec </dev/null',
         "trap 'kill $(jobs -p) 2>/dev/null; wait' EXIT"]
    for k, ex in enumerate(examples):
        s.append('{ %s\n} >%s/%d.out 2>&1' % (ex.command, outdir, k))
    return '\n'.join(s) + '\n'


def updated(expected, exp, act, raw):
    """The expected lines of an example rewritten to what it printed:
    lines that still match stay as the document has them (`...` lines
    included, with what they cover), the others become what the command
    printed (raw: the printed lines, unmasked)."""
    out = []
    sm = difflib.SequenceMatcher(None, exp, act, autojunk=False)
    for op, i1, i2, j1, j2 in sm.get_opcodes():
        if op == 'equal':
            out += expected[i1:i2]
        elif op == 'insert':
            out += raw[j1:j2]
        elif op == 'delete':
            out += [e for e in expected[i1:i2] if e.strip() == '...']
        elif any(e.strip() == '...' for e in expected[i1:i2]):
            # keep the wildcards; each other line becomes the printed
            # line most like it
            for k in range(i1, i2):
                if expected[k].strip() == '...':
                    out.append(expected[k])
                    continue
                best = max(range(j1, j2), key=lambda j: difflib.
                           SequenceMatcher(None, exp[k], act[j]).ratio())
                out.append(expected[k] if line_rx(exp[k]).match(act[best])
                           else raw[best])
        elif i2 - i1 == j2 - j1:
            # line for line: keep each line that still matches (one with
            # a `...` inside it, say), take the printed one for the others
            for k in range(i1, i2):
                j = j1 + k - i1
                out.append(expected[k] if line_rx(exp[k]).match(act[j])
                           else raw[j])
        else:
            out += raw[j1:j2]
    return out


def run_doc(path, examples, root, efplan, timeout, keep, show=False,
            update=None):
    """Runs one document's examples; returns a list of failure texts.
    With 'update' (a dict), each failing example's new expected lines go
    in update[example]."""
    scratch = scratch_dir(root, efplan)
    outdir = tempfile.mkdtemp(prefix='efplan-docs-out.')
    env = dict(os.environ)
    for v in ('EFPLAN_SERVER', 'EFPLAN_TOKEN', 'EFPLAN_CACERT', 'EFPLAN_DATA',
              'EFPLAN', 'EFPLAN_ROOT', 'VALGRIND', 'CDPATH'):
        env.pop(v, None)
    env['PATH'] = os.path.join(scratch, 'build') + ':' + env.get('PATH', '')
    env['TZ'] = 'UTC'
    env['LC_ALL'] = 'C'
    env['HOME'] = scratch
    script = os.path.join(outdir, 'doc.sh')
    with open(script, 'w') as f:
        f.write(script_for(examples, outdir))
    fails = []
    p = subprocess.Popen(['bash', script], cwd=scratch, env=env,
                         start_new_session=True,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        stray, _ = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        stray, _ = p.communicate()
        fails.append('%s: its examples ran past %d s (stopped)'
                     % (path, timeout))
    names = [scratch, os.path.realpath(scratch)]
    roots = sorted({root, os.path.realpath(root)}, key=len, reverse=True)
    for k, ex in enumerate(examples):
        fn = os.path.join(outdir, '%d.out' % k)
        if not os.path.exists(fn):
            fails.append('%s:%d: $ %s\n    never ran' % (path, ex.line,
                                                          ex.command))
            continue
        with open(fn, 'rb') as f:
            got = f.read().decode('utf-8', 'replace')
        if show:
            print('%s:%d: $ %s' % (path, ex.line, ex.command))
            sys.stdout.write(got if got.endswith('\n') or not got
                             else got + '\n')
        exp = normalise(mask('\n'.join(ex.expected), names, roots)
                        .split('\n'))
        act = normalise(mask(got, names, roots).split('\n'))
        if not matches(exp, act) and update is not None:
            raw = normalise(got.replace(scratch, '/tmp/docs').split('\n'))
            update[ex] = updated(normalise(ex.expected), exp, act, raw)
        if not matches(exp, act):
            diff = difflib.unified_diff(exp, act, 'document shows',
                                        'command printed', lineterm='', n=2)
            fails.append('%s:%d: $ %s\n%s' % (
                path, ex.line, ex.command,
                '\n'.join('    ' + l for l in diff)))
    if keep:
        print('kept %s and %s' % (scratch, outdir), file=sys.stderr)
    else:
        shutil.rmtree(scratch, ignore_errors=True)
        shutil.rmtree(outdir, ignore_errors=True)
    return fails


def rewrite(path, upd):
    """Put the new expected lines of the examples in upd into document
    'path' (atomically: a temporary file renamed over it)."""
    with open(path, encoding='utf-8') as f:
        lines = f.read().split('\n')
    for ex in sorted(upd, key=lambda e: -e.after):
        n = len(ex.expected)
        lines[ex.after:ex.after + n] = [ex.indent + l if l else l
                                        for l in upd[ex]]
    tmp = path + '.update.tmp'
    with open(tmp, 'w', encoding='utf-8') as f:
        f.write('\n'.join(lines))
    os.replace(tmp, path)
    print('doctest: rewrote %d example(s) in %s' % (len(upd), path),
          file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--root', required=True,
                    help='the repository (what the scratch directory holds)')
    ap.add_argument('--efplan', required=True, help='the efplan binary')
    ap.add_argument('--timeout', type=int, default=300,
                    help='seconds for one document (default 300)')
    ap.add_argument('--keep', action='store_true',
                    help='keep the scratch and output directories')
    ap.add_argument('--show', action='store_true',
                    help='print what each example printed (to write a '
                    'document: paste it, then mask what varies)')
    ap.add_argument('--update', action='store_true',
                    help='rewrite each failing example\'s output in its '
                    'document with what the command printed (keeping the '
                    'lines that match, `...` included); check the diff')
    ap.add_argument('--list', action='store_true',
                    help='list the examples found, run nothing')
    ap.add_argument('docs', nargs='+')
    a = ap.parse_args()
    efplan = os.path.abspath(a.efplan)
    root = os.path.abspath(a.root)
    total = 0
    fails = []
    for path in a.docs:
        try:
            with open(path, encoding='utf-8') as f:
                examples = parse(path, f.read())
        except (OSError, UnicodeDecodeError, DocError) as e:
            print('doctest: %s' % e, file=sys.stderr)
            return 2
        if a.list:
            for ex in examples:
                print('%s:%d: $ %s' % (path, ex.line, ex.command))
            continue
        if not examples:
            continue
        total += len(examples)
        upd = {} if a.update else None
        fails += run_doc(path, examples, root, efplan, a.timeout, a.keep,
                         a.show, upd)
        if upd:
            rewrite(path, upd)
    if a.list:
        return 0
    for f in fails:
        print('FAIL ' + f)
    print('doctest: %d example(s) in %d document(s), %d failed'
          % (total, len(a.docs), len(fails)))
    return 1 if fails else 0


if __name__ == '__main__':
    sys.exit(main())
