#!/usr/bin/env bash
# Puts the console's screenshots in docs/screenshots: every page in English and Chinese, at
# 1400 px (wide-*) and 390 px (phone-*, the whole page), as the browser test
# `browser::responsive` saved them in target/ui-screenshots, made small as WebP. Run it after
# that test when pages change, look at the pictures, and commit them.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v cwebp >/dev/null || { echo "docs-screenshots: needs cwebp (Debian: apt-get install webp)" >&2; exit 1; }
from=target/ui-screenshots
shopt -s nullglob
shots=("$from"/wide-*.png "$from"/phone-*.png)
if [ ${#shots[@]} -eq 0 ]; then
    echo "docs-screenshots: no shots in $from; run: cargo test --test console -- browser::responsive" >&2
    exit 1
fi
out=docs/screenshots/pages
rm -rf "$out"
mkdir -p "$out"
for png in "${shots[@]}"; do
    name=$(basename "$png" .png)
    cwebp -quiet -q 50 -m 6 "$png" -o "$out/$name.webp"
done
echo "docs-screenshots: ${#shots[@]} pages in $out ($(du -sh "$out" | cut -f1))"
