#!/usr/bin/env python3
"""Minimal self-contained pure-Python Parquet reader (flat schemas).

read_parquet(path) -> dict[str, list]   (column-wise; None for nulls)
read_metadata(path) -> dict               (decoded FileMetaData, field names)

Supports: Thrift compact protocol footer/page headers; data page v1 and v2;
dictionary pages; PLAIN, PLAIN_DICTIONARY/RLE_DICTIONARY, RLE (booleans),
DELTA_BINARY_PACKED, DELTA_LENGTH_BYTE_ARRAY, DELTA_BYTE_ARRAY, BYTE_STREAM_SPLIT;
codecs UNCOMPRESSED, SNAPPY (pure Python), GZIP (zlib), ZSTD (via /usr/bin/zstd).
Required or optional (max def level 1) top-level columns; no repeated/nested.

CLI: python3 parquet_reader.py IN.parquet OUT.csv (used by scripts/fit_gpu_profile.py)
"""
import csv
import struct
import subprocess
import sys
import zlib

# --------------------------------------------------------------------------
# Thrift compact protocol
# --------------------------------------------------------------------------
CT_STOP, CT_TRUE, CT_FALSE, CT_BYTE, CT_I16, CT_I32, CT_I64, CT_DOUBLE, \
    CT_BINARY, CT_LIST, CT_SET, CT_MAP, CT_STRUCT = range(13)


class ThriftReader:
    def __init__(self, buf, pos=0):
        self.buf = buf
        self.pos = pos

    def byte(self):
        b = self.buf[self.pos]
        self.pos += 1
        return b

    def varint(self):
        result = 0
        shift = 0
        while True:
            b = self.byte()
            result |= (b & 0x7F) << shift
            if not b & 0x80:
                return result
            shift += 7

    def zigzag(self):
        n = self.varint()
        return (n >> 1) ^ -(n & 1)

    def binary(self):
        n = self.varint()
        v = bytes(self.buf[self.pos:self.pos + n])
        self.pos += n
        return v

    def value(self, t):
        if t == CT_TRUE:
            return True
        if t == CT_FALSE:
            return False
        if t == CT_BYTE:
            v = self.byte()
            return v - 256 if v > 127 else v
        if t in (CT_I16, CT_I32, CT_I64):
            return self.zigzag()
        if t == CT_DOUBLE:
            v = struct.unpack_from('<d', self.buf, self.pos)[0]
            self.pos += 8
            return v
        if t == CT_BINARY:
            return self.binary()
        if t in (CT_LIST, CT_SET):
            h = self.byte()
            size = h >> 4
            et = h & 0x0F
            if size == 15:
                size = self.varint()
            out = []
            for _ in range(size):
                if et in (CT_TRUE, CT_FALSE):  # bools in containers: 1 byte
                    out.append(self.byte() == 1)
                else:
                    out.append(self.value(et))
            return out
        if t == CT_MAP:
            size = self.varint()
            if size == 0:
                return {}
            kv = self.byte()
            kt, vt = kv >> 4, kv & 0x0F
            out = {}
            for _ in range(size):
                k = self.value(kt)
                out[k] = self.value(vt)
            return out
        if t == CT_STRUCT:
            return self.struct()
        raise ValueError('unknown thrift compact type %d at %d' % (t, self.pos))

    def struct(self):
        """Generic struct -> {field_id: value}."""
        out = {}
        last = 0
        while True:
            h = self.byte()
            if h == CT_STOP:
                return out
            t = h & 0x0F
            delta = h >> 4
            fid = last + delta if delta else self.zigzag()
            last = fid
            out[fid] = self.value(t)


# Field-name maps for the parquet.thrift structs we use (id -> (name, substruct))
STATISTICS = {1: 'max', 2: 'min', 3: 'null_count', 4: 'distinct_count',
              5: 'max_value', 6: 'min_value'}
SCHEMA_ELEMENT = {1: 'type', 2: 'type_length', 3: 'repetition_type', 4: 'name',
                  5: 'num_children', 6: 'converted_type', 7: 'scale',
                  8: 'precision', 9: 'field_id', 10: 'logicalType'}
COLUMN_META = {1: 'type', 2: 'encodings', 3: 'path_in_schema', 4: 'codec',
               5: 'num_values', 6: 'total_uncompressed_size',
               7: 'total_compressed_size', 8: 'key_value_metadata',
               9: 'data_page_offset', 10: 'index_page_offset',
               11: 'dictionary_page_offset', 12: ('statistics', STATISTICS)}
COLUMN_CHUNK = {1: 'file_path', 2: 'file_offset', 3: ('meta_data', COLUMN_META)}
ROW_GROUP = {1: ('columns', COLUMN_CHUNK), 2: 'total_byte_size', 3: 'num_rows',
             4: 'sorting_columns', 5: 'file_offset', 6: 'total_compressed_size',
             7: 'ordinal'}
KEY_VALUE = {1: 'key', 2: 'value'}
FILE_META = {1: 'version', 2: ('schema', SCHEMA_ELEMENT), 3: 'num_rows',
             4: ('row_groups', ROW_GROUP), 5: ('key_value_metadata', KEY_VALUE),
             6: 'created_by'}
DATA_PAGE_HEADER = {1: 'num_values', 2: 'encoding', 3: 'definition_level_encoding',
                    4: 'repetition_level_encoding', 5: ('statistics', STATISTICS)}
DICT_PAGE_HEADER = {1: 'num_values', 2: 'encoding', 3: 'is_sorted'}
DATA_PAGE_HEADER_V2 = {1: 'num_values', 2: 'num_nulls', 3: 'num_rows',
                       4: 'encoding', 5: 'definition_levels_byte_length',
                       6: 'repetition_levels_byte_length', 7: 'is_compressed',
                       8: ('statistics', STATISTICS)}
PAGE_HEADER = {1: 'type', 2: 'uncompressed_page_size', 3: 'compressed_page_size',
               4: 'crc', 5: ('data_page_header', DATA_PAGE_HEADER),
               6: 'index_page_header',
               7: ('dictionary_page_header', DICT_PAGE_HEADER),
               8: ('data_page_header_v2', DATA_PAGE_HEADER_V2)}


def name_struct(raw, spec):
    """Convert {id: value} into {name: value} using spec, recursively."""
    out = {}
    for fid, v in raw.items():
        s = spec.get(fid)
        if s is None:
            out['_%d' % fid] = v
            continue
        if isinstance(s, tuple):
            name, sub = s
            if isinstance(v, list):
                v = [name_struct(x, sub) for x in v]
            else:
                v = name_struct(v, sub)
            out[name] = v
        else:
            out[s] = v
    return out


# --------------------------------------------------------------------------
# Decompression
# --------------------------------------------------------------------------
def snappy_decompress(data):
    n, pos = read_uleb(data, 0)  # the uncompressed length
    out = bytearray()
    L = len(data)
    while pos < L:
        tag = data[pos]
        pos += 1
        t = tag & 3
        if t == 0:  # literal
            ln = tag >> 2
            if ln >= 60:
                nb = ln - 59
                ln = int.from_bytes(data[pos:pos + nb], 'little')
                pos += nb
            ln += 1
            out += data[pos:pos + ln]
            pos += ln
            continue
        if t == 1:
            ln = ((tag >> 2) & 7) + 4
            off = ((tag >> 5) << 8) | data[pos]
            pos += 1
        elif t == 2:
            ln = (tag >> 2) + 1
            off = int.from_bytes(data[pos:pos + 2], 'little')
            pos += 2
        else:
            ln = (tag >> 2) + 1
            off = int.from_bytes(data[pos:pos + 4], 'little')
            pos += 4
        start = len(out) - off
        if off >= ln:
            out += out[start:start + ln]
        else:
            for i in range(ln):
                out.append(out[start + i])
    if len(out) != n:
        raise ValueError('snappy: length mismatch %d != %d' % (len(out), n))
    return bytes(out)


def decompress(codec, data, uncompressed_size):
    if codec == 0:
        return bytes(data)
    if codec == 1:
        return snappy_decompress(data)
    if codec == 2:
        return zlib.decompress(data, 47)  # gzip or zlib header auto-detect
    if codec == 6:
        r = subprocess.run(['zstd', '-d', '-c', '-q'], input=bytes(data),
                           capture_output=True)
        if r.returncode != 0:
            raise RuntimeError('zstd failed: %s' % r.stderr.decode(errors='replace'))
        out = r.stdout
        if len(out) != uncompressed_size:
            raise ValueError('zstd: size %d != expected %d' % (len(out), uncompressed_size))
        return out
    raise NotImplementedError('compression codec %d not supported' % codec)


# --------------------------------------------------------------------------
# Encodings
# --------------------------------------------------------------------------
def read_uleb(buf, pos):
    result = 0
    shift = 0
    while True:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7


def rle_hybrid(buf, pos, end, bit_width, count):
    """Decode `count` values of the RLE/bit-packed hybrid encoding in buf[pos:end]."""
    out = []
    if bit_width == 0:
        return [0] * count
    byte_w = (bit_width + 7) // 8
    mask = (1 << bit_width) - 1
    while len(out) < count and pos < end:
        header, pos = read_uleb(buf, pos)
        if header & 1:  # bit-packed: (header>>1) groups of 8
            ngroups = header >> 1
            nbytes = ngroups * bit_width
            chunk = int.from_bytes(buf[pos:pos + nbytes], 'little')
            pos += nbytes
            for i in range(ngroups * 8):
                out.append((chunk >> (i * bit_width)) & mask)
        else:  # RLE run
            run = header >> 1
            v = int.from_bytes(buf[pos:pos + byte_w], 'little')
            pos += byte_w
            out.extend([v] * run)
    if len(out) < count:
        raise ValueError('RLE hybrid: got %d values, need %d' % (len(out), count))
    return out[:count]


PHYS_BOOLEAN, PHYS_INT32, PHYS_INT64, PHYS_INT96, PHYS_FLOAT, PHYS_DOUBLE, \
    PHYS_BYTE_ARRAY, PHYS_FLBA = range(8)


# Fixed-width physical types: struct code and bytes per value.
FIXED_WIDTH = {PHYS_INT32: ('i', 4), PHYS_INT64: ('q', 8), PHYS_FLOAT: ('f', 4), PHYS_DOUBLE: ('d', 8)}


def plain_decode(buf, pos, ptype, count, type_length=None):
    """Return (values, new_pos)."""
    if ptype in FIXED_WIDTH:
        code, width = FIXED_WIDTH[ptype]
        return list(struct.unpack_from('<%d%s' % (count, code), buf, pos)), pos + width * count
    if ptype == PHYS_BYTE_ARRAY:
        out = []
        for _ in range(count):
            n = struct.unpack_from('<I', buf, pos)[0]
            pos += 4
            out.append(bytes(buf[pos:pos + n]))
            pos += n
        return out, pos
    if ptype == PHYS_FLBA:
        out = [bytes(buf[pos + i * type_length: pos + (i + 1) * type_length])
               for i in range(count)]
        return out, pos + count * type_length
    if ptype == PHYS_BOOLEAN:
        out = [(buf[pos + (i >> 3)] >> (i & 7)) & 1 == 1 for i in range(count)]
        return out, pos + (count + 7) // 8
    if ptype == PHYS_INT96:
        out = []
        for i in range(count):
            lo, hi = struct.unpack_from('<qi', buf, pos + 12 * i)
            out.append((hi, lo))  # (julian day, nanoseconds of day)
        return out, pos + 12 * count
    raise NotImplementedError('physical type %d' % ptype)


def delta_binary_packed(buf, pos, signed_bits=64):
    """Decode DELTA_BINARY_PACKED; return (values, new_pos)."""
    block_size, pos = read_uleb(buf, pos)
    n_mini, pos = read_uleb(buf, pos)
    total, pos = read_uleb(buf, pos)
    first, pos = read_uleb(buf, pos)
    first = (first >> 1) ^ -(first & 1)
    out = [first] if total > 0 else []
    per_mini = block_size // n_mini
    last = first
    while len(out) < total:
        md, pos = read_uleb(buf, pos)
        min_delta = (md >> 1) ^ -(md & 1)
        widths = list(buf[pos:pos + n_mini])
        pos += n_mini
        for w in widths:
            if len(out) >= total:
                # remaining miniblocks are not present... but their widths are; skip
                break
            nbytes = per_mini * w // 8
            chunk = int.from_bytes(buf[pos:pos + nbytes], 'little')
            pos += nbytes
            mask = (1 << w) - 1 if w else 0
            for i in range(per_mini):
                d = (chunk >> (i * w)) & mask if w else 0
                last = last + min_delta + d
                if len(out) < total:
                    out.append(last)
    # wrap to signed width
    lim = 1 << signed_bits
    half = lim >> 1
    out = [((x + half) % lim) - half for x in out]
    return out, pos


def decode_values(buf, pos, end, ptype, encoding, count, type_length, dictionary):
    if count == 0:
        return []
    if encoding == 0:  # PLAIN
        v, _ = plain_decode(buf, pos, ptype, count, type_length)
        return v
    if encoding in (2, 8):  # PLAIN_DICTIONARY / RLE_DICTIONARY
        if dictionary is None:
            raise ValueError('dictionary-encoded page without dictionary')
        bw = buf[pos]
        idx = rle_hybrid(buf, pos + 1, end, bw, count)
        return [dictionary[i] for i in idx]
    if encoding == 3 and ptype == PHYS_BOOLEAN:  # RLE booleans, 4-byte length prefix
        n = struct.unpack_from('<I', buf, pos)[0]
        return [x == 1 for x in rle_hybrid(buf, pos + 4, pos + 4 + n, 1, count)]
    if encoding == 5:  # DELTA_BINARY_PACKED
        v, _ = delta_binary_packed(buf, pos, 32 if ptype == PHYS_INT32 else 64)
        return v[:count]
    if encoding == 6:  # DELTA_LENGTH_BYTE_ARRAY
        lens, p = delta_binary_packed(buf, pos)
        out = []
        for ln in lens[:count]:
            out.append(bytes(buf[p:p + ln]))
            p += ln
        return out
    if encoding == 7:  # DELTA_BYTE_ARRAY
        prefix, p = delta_binary_packed(buf, pos)
        suffix, p = delta_binary_packed(buf, p)
        out = []
        prev = b''
        for pl, sl in zip(prefix[:count], suffix[:count]):
            cur = prev[:pl] + bytes(buf[p:p + sl])
            p += sl
            out.append(cur)
            prev = cur
        return out
    if encoding == 9:  # BYTE_STREAM_SPLIT
        width = {PHYS_FLOAT: 4, PHYS_DOUBLE: 8, PHYS_INT32: 4, PHYS_INT64: 8,
                 PHYS_FLBA: type_length}[ptype]
        raw = bytearray(count * width)
        for b in range(width):
            raw[b::width] = buf[pos + b * count: pos + (b + 1) * count]
        fmt = {PHYS_FLOAT: 'f', PHYS_DOUBLE: 'd', PHYS_INT32: 'i', PHYS_INT64: 'q'}.get(ptype)
        if fmt:
            return list(struct.unpack('<%d%s' % (count, fmt), raw))
        return [bytes(raw[i * width:(i + 1) * width]) for i in range(count)]
    raise NotImplementedError('encoding %d for physical type %d' % (encoding, ptype))


# --------------------------------------------------------------------------
# File level
# --------------------------------------------------------------------------
def read_metadata(path_or_bytes):
    data = path_or_bytes
    if isinstance(path_or_bytes, str):
        with open(path_or_bytes, 'rb') as f:
            data = f.read()
    if data[:4] != b'PAR1' or data[-4:] != b'PAR1':
        raise ValueError('not a parquet file (magic)')
    mlen = struct.unpack_from('<I', data, len(data) - 8)[0]
    start = len(data) - 8 - mlen
    tr = ThriftReader(data, start)
    raw = tr.struct()
    if tr.pos != len(data) - 8:
        raise ValueError('footer length mismatch: parsed to %d, expected %d'
                         % (tr.pos, len(data) - 8))
    return name_struct(raw, FILE_META)


def _leaf_columns(schema):
    """Return list of (name, SchemaElement, max_def, max_rep) for leaves (flat only)."""
    root = schema[0]
    leaves = []
    i = 1
    nroot = root.get('num_children', 0)
    for _ in range(nroot):
        el = schema[i]
        i += 1
        if el.get('num_children'):
            raise NotImplementedError('nested column %r not supported' % el['name'])
        rep = el.get('repetition_type', 0)  # 0 REQUIRED, 1 OPTIONAL, 2 REPEATED
        if rep == 2:
            raise NotImplementedError('repeated column %r not supported' % el['name'])
        leaves.append((el['name'].decode(), el, 1 if rep == 1 else 0))
    return leaves


def _is_string(el):
    if el.get('converted_type') == 0:  # UTF8
        return True
    lt = el.get('logicalType')
    if isinstance(lt, dict) and 1 in lt:  # LogicalType.STRING
        return True
    return False


def _read_chunk(data, cm, el, max_def):
    ptype = cm['type']
    codec = cm['codec']
    type_length = el.get('type_length')
    total = cm['num_values']
    start = cm['data_page_offset']
    dpo = cm.get('dictionary_page_offset')
    if dpo is not None and 0 < dpo < start:
        start = dpo
    end = start + cm['total_compressed_size']
    pos = start
    dictionary = None
    values = []
    seen = 0
    while seen < total:
        if pos >= end:
            raise ValueError('ran past column chunk end (%d/%d values)' % (seen, total))
        tr = ThriftReader(data, pos)
        ph = name_struct(tr.struct(), PAGE_HEADER)
        pos = tr.pos
        csize = ph['compressed_page_size']
        usize = ph['uncompressed_page_size']
        body = data[pos:pos + csize]
        pos += csize
        ptype_page = ph['type']
        if ptype_page == 2:  # DICTIONARY_PAGE
            dh = ph['dictionary_page_header']
            page = decompress(codec, body, usize)
            dictionary, _ = plain_decode(page, 0, ptype, dh['num_values'], type_length)
            continue
        if ptype_page == 0:  # DATA_PAGE v1
            dh = ph['data_page_header']
            n = dh['num_values']
            page = decompress(codec, body, usize)
            p = 0
            if max_def > 0:
                if dh.get('definition_level_encoding', 3) != 3:
                    raise NotImplementedError('def level encoding %r'
                                              % dh.get('definition_level_encoding'))
                ln = struct.unpack_from('<I', page, 0)[0]
                defs = rle_hybrid(page, 4, 4 + ln, 1, n)
                p = 4 + ln
            else:
                defs = None
            nnon = n if defs is None else sum(defs)
            vals = decode_values(page, p, len(page), ptype, dh['encoding'], nnon,
                                 type_length, dictionary)
        elif ptype_page == 3:  # DATA_PAGE v2
            dh = ph['data_page_header_v2']
            n = dh['num_values']
            dl = dh.get('definition_levels_byte_length', 0)
            rl = dh.get('repetition_levels_byte_length', 0)
            levels = body[:rl + dl]
            rest = body[rl + dl:]
            if dh.get('is_compressed', True):
                rest = decompress(codec, rest, usize - rl - dl)
            else:
                rest = bytes(rest)
            if max_def > 0 and dl > 0:
                defs = rle_hybrid(levels, rl, rl + dl, 1, n)
            else:
                defs = None
            nnon = n if defs is None else sum(defs)
            vals = decode_values(rest, 0, len(rest), ptype, dh['encoding'], nnon,
                                 type_length, dictionary)
        else:  # index page or unknown: skip
            continue
        if defs is None:
            values.extend(vals)
        else:
            it = iter(vals)
            values.extend(next(it) if d else None for d in defs)
        seen += n
    if _is_string(el) or ptype == PHYS_BYTE_ARRAY:
        out = []
        for v in values:
            if isinstance(v, bytes):
                try:
                    v = v.decode('utf-8')
                except UnicodeDecodeError:
                    pass
            out.append(v)
        values = out
    return values


def read_parquet(path):
    """Read a flat Parquet file into {column_name: [values...]}."""
    with open(path, 'rb') as f:
        data = f.read()
    meta = read_metadata(data)
    leaves = _leaf_columns(meta['schema'])
    cols = {name: [] for name, _, _ in leaves}
    for rg in meta.get('row_groups', []):
        chunks = rg['columns']
        by_path = {'.'.join(p.decode() for p in c['meta_data']['path_in_schema']): c
                   for c in chunks}
        for name, el, max_def in leaves:
            cm = by_path[name]['meta_data']
            vals = _read_chunk(data, cm, el, max_def)
            if len(vals) != rg['num_rows']:
                raise ValueError('column %s: %d values in row group of %d rows'
                                 % (name, len(vals), rg['num_rows']))
            cols[name].extend(vals)
    n = meta['num_rows']
    for name, v in cols.items():
        if len(v) != n:
            raise ValueError('column %s has %d rows, footer says %d' % (name, len(v), n))
    return cols


def write_csv(cols, out_path):
    names = list(cols)
    n = len(cols[names[0]]) if names else 0
    with open(out_path, 'w', newline='') as f:
        w = csv.writer(f)
        w.writerow(names)
        for i in range(n):
            row = []
            for c in names:
                v = cols[c][i]
                if v is None:
                    v = ''
                elif isinstance(v, float):
                    v = repr(v)
                row.append(v)
            w.writerow(row)
    return n


if __name__ == '__main__':
    if len(sys.argv) != 3:
        sys.exit('usage: read_parquet.py IN.parquet OUT.csv')
    meta = read_metadata(sys.argv[1])
    cols = read_parquet(sys.argv[1])
    n = write_csv(cols, sys.argv[2])
    print('%s: %d rows (footer num_rows=%d), %d row groups, columns: %s'
          % (sys.argv[1], n, meta['num_rows'], len(meta.get('row_groups', [])),
             ', '.join(cols)))
