#!/usr/bin/env bash
# Builds assets/editor.js (CodeMirror 6 with the GLUE languages and the merge view) and
# assets/editor-licences.txt from the npm registry, at the versions pinned in
# scripts/editor/package-lock.json. Run it when those versions change and commit both files:
# `cargo build` needs neither npm nor this script, and no page loads anything from a CDN.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp scripts/editor/package.json scripts/editor/entry.js scripts/editor/licences.mjs "$work/"
if [ -f scripts/editor/package-lock.json ]; then
    cp scripts/editor/package-lock.json "$work/"
    (cd "$work" && npm ci --no-audit --no-fund --loglevel=error)
else
    (cd "$work" && npm install --no-audit --no-fund --loglevel=error)
    cp "$work/package-lock.json" scripts/editor/package-lock.json
fi
(
    cd "$work"
    ./node_modules/.bin/esbuild entry.js --bundle --minify --format=iife --target=es2020 \
        --legal-comments=none --metafile=meta.json --outfile=editor.js --log-level=warning
    node licences.mjs meta.json > editor-licences.txt
)
{
    echo "/* CodeMirror 6 for jobwheel's GLUE page, built by scripts/build-editor.sh;"
    echo "   licences: /static/editor-licences.txt */"
    cat "$work/editor.js"
} > assets/editor.js
cp "$work/editor-licences.txt" assets/editor-licences.txt
echo "assets/editor.js: $(wc -c < assets/editor.js) bytes; licences of $(grep -c '^=\{72\}$' assets/editor-licences.txt | awk '{print $1/2}') packages"
