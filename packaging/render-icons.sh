#!/usr/bin/env bash
# Renders packaging/icons/stepformer.svg into the PNG sizes the desktop's icon theme wants
# (packaging/icons/stepformer-<N>.png, installed as share/icons/hicolor/<N>x<N>/apps/stepformer.png).
# The PNGs are committed, so building needs no SVG renderer; run this after editing the SVG.
# Needs rsvg-convert (Debian package librsvg2-bin).
set -euo pipefail
cd "$(dirname "$0")/icons"
command -v rsvg-convert >/dev/null || { echo "render-icons: rsvg-convert missing (apt-get install librsvg2-bin)" >&2; exit 1; }
for n in 16 24 32 48 64 128 256 512; do
  rsvg-convert -w "$n" -h "$n" stepformer.svg -o "stepformer-$n.png.tmp"
  mv "stepformer-$n.png.tmp" "stepformer-$n.png"
done
echo "render-icons: wrote $(ls stepformer-*.png | tr '\n' ' ')"
