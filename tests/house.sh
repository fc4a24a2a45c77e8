#!/bin/sh
# house.sh — checks the house plan of docs/ARCHITECTURE.md against the code: every file uses
# (includes, or calls a function or reads data defined in) only files of its own floor or of
# floors below, and no two files use each other, directly or around a circle.
# Usage: sh tests/house.sh OBJ_DIR FLOOR...   (FLOOR: a folder of src/, lowest first; the
# Makefile passes its LIB_DIRS). Exits 1 naming each use that runs up and each circle.
# Above the library's folders stand, in order: the families' library files, the CLI's own
# folder, the families' CLI files, the plugin and the families' generators (the plugin links
# none of the library; it includes only headers of plain data from below).
# The three tables that a family list builds (catalog/family.c, cli/families.c,
# plugin/plugin.c) name each family's descriptor by an X-macro: a registration, not a use, so
# the symbols pj_family_NAME, cli_family_NAME and gen_family_NAME make no arrow.
set -u
obj=$1
shift
floors="$*"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The floor of a source path (src/... .c or .h): a number, higher is above.
floor_awk='
function floor_of(path,   parts, n, i, f) {
    n = split(path, parts, "/")
    if (parts[2] == "families" && n >= 4) {
        if (parts[4] ~ /^gen/) return 91
        if (parts[4] ~ /^cli/) return 82
        if (parts[4] ~ /^test/) return 99
        return 80
    }
    if (parts[2] == "cli" || parts[2] ~ /^cli_/) return 81
    if (parts[2] == "plugin") return 90
    if (n == 2) return 0          # src/internal.h and the like: the ground
    for (i = 1; i <= nfloors; i++) if (parts[2] == floor[i]) return i
    return -1
}
BEGIN { nfloors = split(FLOORS, floor, " ") }'

# 1. Uses by symbol: who defines what, who needs what.
find "$obj/src" -name '*.o' ! -path '*/gen/*' ! -path '*/tools/*' | sort | while read -r o; do
    src=${o#"$obj"/}
    src=${src%.o}.c
    [ -f "$src" ] || continue   # left behind by a file since renamed
    nm "$o" 2>/dev/null | awk -v src="$src" '
        NF == 3 && $2 ~ /^[TDBRVW]$/ { print "D", src, $3 }
        NF == 2 && $1 == "U" { print "U", src, $2 }'
done > "$tmp/symbols"
awk '$1 == "D" { def[$3] = $2; next }
     $1 == "U" && ($3 in def) && def[$3] != $2 &&
         $3 !~ /^(pj|cli|gen)_family_[a-z0-9_]+$/ { print $2, def[$3], $3 }' \
    "$tmp/symbols" "$tmp/symbols" | sort -u > "$tmp/calls"

# 2. Uses by include: a quoted include, found next to the file or under src/.
for f in $(find src -name '*.c' -o -name '*.h' | sort); do
    sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f" |
    while read -r inc; do
        dir=$(dirname "$f")
        if [ -f "$dir/$inc" ]; then
            target=$(realpath --relative-to=. "$dir/$inc")
        elif [ -f "src/$inc" ]; then
            target="src/$inc"
        else
            continue
        fi
        # A header stands for the .c of the same name where there is one.
        case $target in *.h) [ -f "${target%.h}.c" ] && target="${target%.h}.c" ;; esac
        case $f in *.h) [ -f "${f%.h}.c" ] && f="${f%.h}.c" ;; esac
        [ "$target" != "$f" ] && echo "$f $target #include"
    done
done | sort -u > "$tmp/includes"

cat "$tmp/calls" "$tmp/includes" > "$tmp/uses"
bad=0
awk -v FLOORS="$floors" "$floor_awk"'
    { a = floor_of($1); b = floor_of($2)
      if (a < 0 || b < 0) next
      if (b > a) print "runs up: " $1 " -> " $2 " (" $3 ")" }' "$tmp/uses" > "$tmp/up"
if [ -s "$tmp/up" ]; then
    cat "$tmp/up"
    bad=1
fi
# 3. Circles: tsort finds one where the file-to-file uses loop.
awk '{ print $1, $2 }' "$tmp/uses" | sort -u > "$tmp/edges"
if ! tsort "$tmp/edges" > /dev/null 2> "$tmp/loops"; then
    echo "circle between files:"
    grep -v 'input contains a loop' "$tmp/loops" | sed 's/^tsort: /  /'
    bad=1
fi
files=$(awk '{ print $1; print $2 }' "$tmp/edges" | sort -u | wc -l)
uses=$(wc -l < "$tmp/edges")
if [ $bad = 0 ]; then
    echo "house: $files files, $uses uses between them, none runs up a floor, no circle"
fi
exit $bad
