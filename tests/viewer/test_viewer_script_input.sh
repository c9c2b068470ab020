#!/bin/bash
# The viewer's --script reader against hostile input (issue 17): every bad script is refused
# before a window opens, with exit 2 and "cofem_view: FILE[:LINE]: what is wrong", and nothing
# hangs: a FIFO with no writer and /dev/zero (through a symlink) are refused before they are
# opened, a file above 16 MiB before it is read; a NUL byte, an overlong argument, a non-finite
# number and an eighth word are errors naming the line (they were read silently: a 1024-byte
# line split in two, NaN cursor positions, words past the seventh dropped).
set -u
unset DISPLAY # a bad script must be refused before any window: none can open here
VIEW=${COFEM_BUILD:-build}/viewer/cofem_view
[ -x "$VIEW" ] || { echo "SKIP: viewer not built ($VIEW)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
# expect NAME SCRIPT PATTERN: cofem_view --script SCRIPT exits 2 within 10 s, stderr matches PATTERN
expect() {
  timeout 10 "$VIEW" --script "$2" lug >"$tmp/out" 2>"$tmp/err" </dev/null
  local rc=$? msg
  msg=$(head -c 300 "$tmp/err" | tr '\n' ' ')
  if [ $rc -eq 2 ] && grep -q -- "$3" "$tmp/err"; then echo "ok: $1: $msg"
  else echo "FAIL: $1: exit $rc (want 2), stderr: $msg (want '$3')"; fail=$((fail + 1)); fi
}
mkfifo "$tmp/fifo"
expect "FIFO without a writer" "$tmp/fifo" "not a regular file but a FIFO"
ln -s /dev/zero "$tmp/zero"
expect "symlink to /dev/zero" "$tmp/zero" "not a regular file but a character device"
expect "a directory" "$tmp" "not a regular file but a directory"
expect "missing file" "$tmp/none.txt" "none.txt"
truncate -s 17M "$tmp/big.txt"
expect "17 MiB" "$tmp/big.txt" "a script has at most"
printf 'frame 1 key S\nkey\0S\nquit\n' >"$tmp/nul.txt"
expect "NUL byte" "$tmp/nul.txt" "nul.txt:2: a NUL byte"
printf 'frame 1 key S\nquit' >"$tmp/nul_last.txt"; printf '\0x' >>"$tmp/nul_last.txt"
expect "NUL byte on the last line" "$tmp/nul_last.txt" "nul_last.txt:2: a NUL byte"
{ printf 'screenshot '; head -c 600 /dev/zero | tr '\0' a; printf '.png\n'; } >"$tmp/long.txt"
expect "a 604-character file name" "$tmp/long.txt" "long.txt:1: the file name is longer than 511"
{ printf 'frame 3 report '; head -c 2000 /dev/zero | tr '\0' b; printf '\n'; } >"$tmp/longline.txt"
expect "a 2015-character line" "$tmp/longline.txt" "longline.txt:1: the label is longer than 511"
printf 'drag_start @probe\ndrag_by nan 0\n' >"$tmp/nan.txt"
expect "drag_by nan" "$tmp/nan.txt" "nan.txt:2: drag_by needs two numbers"
printf 'drag_to 1e999 0\n' >"$tmp/inf.txt"
expect "drag_to 1e999" "$tmp/inf.txt" "inf.txt:1: drag_to needs two numbers"
printf 'frame 2 key S a b c d e\n' >"$tmp/words.txt"
expect "eight words" "$tmp/words.txt" "words.txt:1: more than 7 words"
printf 'frame 5 key S\nframe 4 key S\n' >"$tmp/back.txt"
expect "frames going back" "$tmp/back.txt" "back.txt:2: frame 4 comes after frame 5"
echo "viewer script input: $fail failed"
[ $fail -eq 0 ]
