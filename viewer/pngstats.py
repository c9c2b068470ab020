#!/usr/bin/env python3
"""Pixel statistics of the viewer's screenshots, for the tests (Python standard library only).

  pngstats.py COMMAND... (in a row, each image decoded once; output lines "TAG key=value")
    stats FILE.png    size, the part's pixels (those that differ from their row's background),
                      their colours, lighting and centroid, the status bar's text and the
                      legend's colour bar
    diff A.png B.png  mean absolute difference of the scene areas (0-255)
    count FILE.png X0 Y0 X1 Y1 R G B TOL
                      pixels in the box whose colour is within TOL of (R, G, B) in every channel
                      (e.g. the orange of the "slower than real time" warning)

The scene area leaves out the title (top), the status bar (bottom) and the legend (right), whose
sizes follow the viewer's layout for the window width (render.c).
"""
import struct
import sys
import zlib


def read_png(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise SystemExit(f"{path}: not a PNG file")
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        n, typ = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        pos += 12 + n
        if typ == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or ctype not in (2, 6) or interlace:
                raise SystemExit(f"{path}: only 8-bit RGB/RGBA, non-interlaced PNG is supported")
            bpp = 3 if ctype == 2 else 4
        elif typ == b"IDAT":
            idat += body
    raw = zlib.decompress(idat)
    stride = w * bpp
    rows, prev = [], [0] * stride
    for y in range(h):
        ft = raw[y * (stride + 1)]
        line = list(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if ft == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 255
        elif ft == 2:
            line = [(x + b) & 255 for x, b in zip(line, prev)]
        elif ft == 3:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 255
        elif ft == 4:
            for i in range(bpp):
                line[i] = (line[i] + prev[i]) & 255
            for i in range(bpp, stride):
                a = line[i - bpp]
                b = prev[i]
                c = prev[i - bpp]
                pa = b - c
                pb = a - c
                pc = pa + pb
                if pa < 0:
                    pa = -pa
                if pb < 0:
                    pb = -pb
                if pc < 0:
                    pc = -pc
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else (b if pb <= pc else c))) & 255
        rows.append([tuple(line[x * bpp:x * bpp + 3]) for x in range(w)])
        prev = line
    return w, h, rows


GRID = (191, 204, 230)  # ground-grid colour (render.c), drawn at 10-20% opacity


def layout(w, h):
    """Scene area (x0, y0, x1, y1) without the title, status bar and legend."""
    ts = 1.75 if w >= 1100 else (1.4 if w >= 760 else 1.2)
    lh = 12 * ts
    return 0, int(lh + 14), int(w - 135), int(h - 2 * lh - 16)


def stats(path, image):
    w, h, rows = image
    x0, y0, x1, y1 = layout(w, h)
    out = {"width": w, "height": h}
    part, n_area = [], 0
    for y in range(y0, y1):
        row = rows[y]
        counts = {}
        for c in row:
            counts[c] = counts.get(c, 0) + 1
        bg = max(counts, key=counts.get)
        g = [GRID[i] - bg[i] for i in range(3)]
        gg = sum(v * v for v in g) or 1
        for x in range(x0, x1):
            c = row[x]
            n_area += 1
            d = [c[i] - bg[i] for i in range(3)]
            if abs(d[0]) + abs(d[1]) + abs(d[2]) <= 30:
                continue
            # faint ground-grid lines: the background blended towards the grid colour
            t = sum(d[i] * g[i] for i in range(3)) / gg
            if 0 < t < 0.25 and sum((d[i] - t * g[i]) ** 2 for i in range(3)) < 150:
                continue
            part.append((x, y, c))
    n = len(part)
    out["part_frac"] = n / max(n_area, 1)
    if n:
        mr = sum(p[2][0] for p in part) / n
        mg = sum(p[2][1] for p in part) / n
        mb = sum(p[2][2] for p in part) / n
        lum = [0.299 * p[2][0] + 0.587 * p[2][1] + 0.114 * p[2][2] for p in part]
        ml = sum(lum) / n
        out["mean_rgb"] = f"{mr:.1f},{mg:.1f},{mb:.1f}"
        out["lum_std"] = (sum((v - ml) ** 2 for v in lum) / n) ** 0.5
        out["warm_frac"] = sum(1 for p in part if p[2][0] > p[2][2] + 50) / n
        out["cool_frac"] = sum(1 for p in part if p[2][2] > p[2][0] + 50) / n
        out["gray_frac"] = sum(1 for p in part if max(p[2]) - min(p[2]) < 30) / n
        out["cx"] = sum(p[0] for p in part) / n
        out["cy"] = sum(p[1] for p in part) / n
    # status bar: bright text pixels in the bottom rows
    out["status_bright"] = sum(1 for y in range(y1 + 2, h) for c in rows[y] if min(c) > 200)
    # legend: the colour bar's column, sampled near its top and bottom
    ui = 1.0
    lx = int(w - 120 * ui + 9 * ui)
    top, bot = int(0.14 * h + 6), int(0.14 * h + 0.42 * h - 6)
    out["legend_top"] = "%d,%d,%d" % rows[top][lx]
    out["legend_bottom"] = "%d,%d,%d" % rows[bot][lx]
    return out


def diff(a, b):
    wa, ha, ra = a
    wb, hb, rb = b
    if (wa, ha) != (wb, hb):
        raise SystemExit(f"sizes differ: {wa}x{ha} and {wb}x{hb}")
    x0, y0, x1, y1 = layout(wa, ha)
    s = 0
    for y in range(y0, y1):
        for x in range(x0, x1):
            ca, cb = ra[y][x], rb[y][x]
            s += abs(ca[0] - cb[0]) + abs(ca[1] - cb[1]) + abs(ca[2] - cb[2])
    return s / (3 * (x1 - x0) * (y1 - y0))


def main(argv):
    """Commands in a row, each image decoded once: output lines "TAG key=value", TAG the file's
    name without .png (stats, count) or "A:B" (diff)."""
    cache = {}

    def img(path):
        if path not in cache:
            cache[path] = read_png(path)
        return cache[path]

    def tag(path):
        base = path.rsplit("/", 1)[-1]
        return base[:-4] if base.endswith(".png") else base

    i = 0
    while i < len(argv):
        cmd = argv[i]
        if cmd == "stats" and i + 1 < len(argv):
            for k, v in stats(argv[i + 1], img(argv[i + 1])).items():
                print(f"{tag(argv[i + 1])} {k}={v:.4g}" if isinstance(v, float) else f"{tag(argv[i + 1])} {k}={v}")
            i += 2
        elif cmd == "diff" and i + 2 < len(argv):
            print(f"{tag(argv[i + 1])}:{tag(argv[i + 2])} diff={diff(img(argv[i + 1]), img(argv[i + 2])):.4g}")
            i += 3
        elif cmd == "count" and i + 9 < len(argv):
            w, h, rows = img(argv[i + 1])
            x0, y0, x1, y1, r, g, b, tol = (int(v) for v in argv[i + 2:i + 10])
            n = sum(1 for y in range(max(y0, 0), min(y1, h)) for x in range(max(x0, 0), min(x1, w))
                    if max(abs(rows[y][x][0] - r), abs(rows[y][x][1] - g), abs(rows[y][x][2] - b)) <= tol)
            print(f"{tag(argv[i + 1])} count={n}")
            i += 10
        else:
            raise SystemExit(__doc__)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    main(sys.argv[1:])
