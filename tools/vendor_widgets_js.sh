#!/usr/bin/env bash
# Re-vendor the JavaScript the static book needs to render ipywidgets offline:
#   @jupyter-widgets/html-manager  dist/embed-amd.js (+ the Font Awesome woff2 it references)
#   requirejs                      require.js
# into book/_vendor/pymq-widgets/. Only run this when bumping versions; the files are committed.
# html-manager 1.0.x is the line that matches ipywidgets 8 (widget model versions 2.x).
set -euo pipefail
HTML_MANAGER_VERSION="${HTML_MANAGER_VERSION:-1.0.15}"
REQUIREJS_VERSION="${REQUIREJS_VERSION:-2.3.8}"

cd "$(dirname "$0")/.."
DEST=book/_vendor/pymq-widgets
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
( cd "$tmp" && npm pack --silent "@jupyter-widgets/html-manager@$HTML_MANAGER_VERSION" "requirejs@$REQUIREJS_VERSION" >/dev/null )
mkdir -p "$tmp/hm" "$tmp/rq"
tar xzf "$tmp"/jupyter-widgets-html-manager-*.tgz -C "$tmp/hm"
tar xzf "$tmp"/requirejs-*.tgz -C "$tmp/rq"

rm -rf "$DEST"; mkdir -p "$DEST"
cp "$tmp/hm/package/dist/embed-amd.js" "$DEST/"
cp "$tmp"/hm/package/dist/*.woff2 "$DEST/"          # browsers take the woff2 of each @font-face
cp "$tmp/hm/package/dist/embed.js.LICENSE.txt" "$DEST/THIRD-PARTY-LICENSES.txt"
cp "$tmp/rq/package/require.js" "$DEST/"
cat > "$DEST/VERSIONS" <<TXT
@jupyter-widgets/html-manager $HTML_MANAGER_VERSION  (BSD-3-Clause; bundled notices in THIRD-PARTY-LICENSES.txt)
requirejs $REQUIREJS_VERSION  (MIT)
vendored by tools/vendor_widgets_js.sh from the npm registry
TXT
du -sh "$DEST"; ls -la "$DEST"
