#!/usr/bin/env python3
"""zstd_frames.py - the zstd frames of a phantom .evt/.log file, found independently
of phantom's reader (RFC 8878 frame and block headers only, no decompression).
For tests that import it, log_records() also reads a message log's records,
each frame decompressed by zstd(1).

usage:
  zstd_frames.py FILE                    one line per frame: start end raw_size [truncated]
  zstd_frames.py FILE --containing OFF   start offset of the frame holding byte OFF
  zstd_frames.py FILE --first-bad        offset of the first truncated frame, or "none"
  zstd_frames.py FILE... --sizes         frames, raw bytes (sum of content sizes, plus
                                         the 32-byte headers) and file bytes, summed

A phantom file is a 32-byte header followed by zstd frames (doc/trace-format.md).
"""
import struct
import subprocess
import sys

HEADER = 32
MAGIC = 0xFD2FB528


def frames(data):
    """Yields (start, end, content_size, complete) for every frame after the header."""
    off = HEADER
    n = len(data)
    while off < n:
        start = off
        if n - off < 5:
            yield start, n, None, False
            return
        magic, = struct.unpack_from('<I', data, off)
        if magic != MAGIC:
            raise ValueError(f'offset {off}: not a zstd frame (magic {magic:#x})')
        fhd = data[off + 4]
        fcs_flag, single, checksum, dict_flag = fhd >> 6, (fhd >> 5) & 1, (fhd >> 2) & 1, fhd & 3
        off += 5
        if not single:
            off += 1  # window descriptor
        off += (0, 1, 2, 4)[dict_flag]
        fcs_len = (1 if single else 0, 2, 4, 8)[fcs_flag]
        if off + fcs_len > n:
            yield start, n, None, False
            return
        size = int.from_bytes(data[off:off + fcs_len], 'little') if fcs_len else None
        if fcs_len == 2:
            size += 256
        off += fcs_len
        while True:
            if off + 3 > n:
                yield start, n, size, False
                return
            bh = int.from_bytes(data[off:off + 3], 'little')
            last, btype, bsize = bh & 1, (bh >> 1) & 3, bh >> 3
            off += 3 + (1 if btype == 1 else bsize)
            if off > n:
                yield start, n, size, False
                return
            if last:
                break
        if checksum:
            off += 4
        if off > n:
            yield start, n, size, False
            return
        yield start, off, size, True


def _uv(b, p):
    v = shift = 0
    while True:
        v |= (b[p] & 0x7f) << shift
        shift += 7
        p += 1
        if b[p - 1] < 0x80:
            return v, p


def log_records(path):
    """Yields (frame, event, slot, length) for every record of a message log's
    complete frames (doc/trace-format.md, section 6: uv event, uv slot, uv
    length, then the bytes); frame counts from 0."""
    with open(path, 'rb') as f:
        data = f.read()
    for i, (start, end, _, complete) in enumerate(frames(data)):
        if not complete:
            return
        raw = subprocess.run(['zstd', '-dcq'], input=data[start:end], capture_output=True, check=True).stdout
        p = 0
        while p < len(raw):
            event, p = _uv(raw, p)
            slot, p = _uv(raw, p)
            n, p = _uv(raw, p)
            p += n
            yield i, event, slot, n


def main(argv):
    if len(argv) < 2:
        sys.stderr.write(__doc__)
        return 2
    if argv[-1] == '--sizes':
        nframes = raw = filebytes = 0
        for path in argv[1:-1]:
            with open(path, 'rb') as f:
                data = f.read()
            filebytes += len(data)
            raw += HEADER
            for _, _, size, complete in frames(data):
                if not complete or size is None:
                    raise SystemExit(f'{path}: a truncated frame')
                nframes += 1
                raw += size
        print(nframes, raw, filebytes)
        return 0
    with open(argv[1], 'rb') as f:
        data = f.read()
    fl = list(frames(data))
    if len(argv) == 2:
        for s, e, size, complete in fl:
            print(s, e, size, '' if complete else 'truncated')
    elif argv[2] == '--containing':
        off = int(argv[3])
        for s, e, _, _ in fl:
            if s <= off < e:
                print(s)
                return 0
        print('none')
        return 1
    elif argv[2] == '--first-bad':
        bad = [s for s, _, _, complete in fl if not complete]
        print(bad[0] if bad else 'none')
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
