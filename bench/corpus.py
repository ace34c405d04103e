#!/usr/bin/python3
"""Extract Chinese text lines straight from Debian .deb files.

Usage: corpus.py PLAN OUT_ALL OUT_TRAD STATS
  PLAN  lines "pkg variant scope deb-path" (see corpus-packages.txt):
        variant S|T is the script assumed for files whose path names no
        Chinese locale; scope "all" reads every file, "zh" only files whose
        path names a Chinese locale (plus zip/jar/xpi archives, whose
        members are filtered the same way).
Writes OUT_ALL (every kept line, Simplified and Traditional), OUT_TRAD (only
the lines from Traditional-locale files) and per-package byte counts to STATS.

Deterministic: packages in PLAN order, files in byte-sorted path order, lines
deduplicated keeping the first occurrence; nothing depends on the locale,
hash seeds or the number of worker processes.
"""
import gzip
import html.parser
import io
import json
import multiprocessing
import os
import re
import struct
import subprocess
import sys
import tarfile
import zipfile

HAN_RE = re.compile(r'[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f]')
WS_RE = re.compile(r'\s+')
CTRL_RE = re.compile(r'[\x00-\x1f\x7f]')  # BEL, BS, stray escapes in catalogs
ANSI_RE = re.compile(r'\x1b\[[0-9;]*[A-Za-z]')
# "IDENTIFIER = value" / "IDENTIFIER;value" / "dotted.key: value" prefixes of
# catalog-like text files: keep only the translated value.
KEY_RE = re.compile(r'^(?:[A-Za-z_][A-Za-z0-9_.\-\[\]]*\s*[=;]|[A-Za-z][A-Za-z0-9]*[_.][A-Za-z0-9_.]*:)\s*')
# Locale tags in paths; checked on the path relative to the package root.
TRAD_RE = re.compile(r'(?i)(?:(?:^|[/_.-])zh[-_](?:tw|hk|mo|hant)(?=$|[/_.@-])'
                     r'|traditional[-_ ]chinese|chinese[-_ (]+(?:traditional|taiwan|hong ?kong))')
SIMP_RE = re.compile(r'(?i)(?:(?:^|[/_.-])zh[-_](?:cn|sg|my|hans)(?=$|[/_.@-])'
                     r'|simplified[-_ ]chinese|chinese[-_ (]+(?:simplified|china))')
ANY_ZH_RE = re.compile(r'(?i)(?:^|[/_.-])zh(?:[-_][a-z]+)?(?=$|[/_.@-])|chinese')
# Runs of printable UTF-8 inside binary files (compiled catalogs).
UTF8_RUN_RE = re.compile(rb'(?:[\x20-\x7e]|[\xc2-\xdf][\x80-\xbf]|[\xe0-\xef][\x80-\xbf]{2}'
                         rb'|[\xf0-\xf4][\x80-\xbf]{3})+')
# Minimum Han characters per line, and Han share of non-blank characters:
# drops code, tables of identifiers and untranslated English.
MIN_HAN = 2
MIN_SHARE = 0.25

BLOCK_TAGS = {
    'p', 'div', 'br', 'li', 'ul', 'ol', 'dl', 'dt', 'dd', 'tr', 'td', 'th',
    'table', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'title', 'pre', 'section',
    'article', 'header', 'footer', 'nav', 'blockquote', 'caption', 'figure',
    'figcaption', 'hr', 'option', 'body', 'head',
    # Mallard (.page) and DocBook-ish block elements
    'page', 'info', 'desc', 'note', 'item', 'list', 'steps', 'terms',
    'tree', 'example', 'synopsis', 'screen', 'code', 'quote', 'comment',
    'credit', 'license', 'links', 'link', 'media', 'figure', 'listing',
    'table', 'row', 'entry', 'para', 'title', 'subtitle', 'paragraph',
    'prop', 'value', 'node', 'menu', 'menuitem', 'label',
}
SKIP_TAGS = {'script', 'style', 'math'}
SVG_TAGS = {'text', 'flowpara', 'flowroot', 'tspan', 'title', 'desc'}


class TextParser(html.parser.HTMLParser):
    """Collects character data; block-level tags become line breaks."""

    def __init__(self, blocks):
        super().__init__(convert_charrefs=True)
        self.out = []
        self.skip = 0
        self.blocks = blocks

    def handle_starttag(self, tag, attrs):
        tag = tag.split(':')[-1]
        if tag in SKIP_TAGS:
            self.skip += 1
        elif tag in self.blocks:
            self.out.append('\n')

    def handle_endtag(self, tag):
        tag = tag.split(':')[-1]
        if tag in SKIP_TAGS:
            self.skip = max(0, self.skip - 1)
        elif tag in self.blocks:
            self.out.append('\n')

    def handle_data(self, data):
        if not self.skip:
            self.out.append(data)


def markup_text(data, svg=False):
    p = TextParser(BLOCK_TAGS | SVG_TAGS if svg else BLOCK_TAGS)
    p.feed(data)
    p.close()
    return ''.join(p.out).split('\n')


def mo_strings(blob):
    """msgstr texts of a GNU .mo catalog (plural forms split on NUL)."""
    if len(blob) < 28:
        return []
    magic = struct.unpack('<I', blob[:4])[0]
    end = '<' if magic == 0x950412de else '>'
    _, _, n, ooff, toff = struct.unpack(end + '5I', blob[:20])
    out = []
    for i in range(n):
        olen = struct.unpack(end + 'I', blob[ooff + 8 * i:ooff + 8 * i + 4])[0]
        ln, off = struct.unpack(end + '2I', blob[toff + 8 * i:toff + 8 * i + 8])
        if olen == 0:
            continue  # header entry (empty msgid)
        out.extend(blob[off:off + ln].decode('utf-8', 'replace').split('\0'))
    # Multi-line messages: one line per paragraph.
    return [ln for s in out for ln in s.split('\n')]


def json_strings(obj):
    if isinstance(obj, str):
        yield from obj.split('\n')
    elif isinstance(obj, dict):
        for k in sorted(obj):
            if k != '@metadata':
                yield from json_strings(obj[k])
    elif isinstance(obj, list):
        for v in obj:
            yield from json_strings(v)


ESC_RE = re.compile(r'\\(?:f(?:\[[^]]*\]|\(..|.)|s[-+]?\d+|\(..|\*(?:\(..|\[[^]]*\]|.)|[&e\-|^ ~0c:%"]|n.)')


def troff_text(data):
    out = []
    for line in data.split('\n'):
        if line.startswith(("'", '.')):
            if line.startswith(('.\\"', "'\\\"", '.\\#')):
                continue
            # Keep the arguments of font/section macros, drop other requests.
            m = re.match(r"^[.'](SH|SS|TP|IP|B|I|BI|BR|IR|RB|RI|IB|SM|SB|TH)\b\s*(.*)$", line)
            if not m:
                continue
            line = m.group(2).replace('"', ' ')
        out.append(ESC_RE.sub('', line).replace('\\\\', '\\'))
    return out


def ftl_or_props_text(data, name):
    out = []
    for line in data.split('\n'):
        s = line.strip()
        if not s or s[0] in '#!':
            continue
        if name.endswith('.dtd'):
            out.extend(re.findall(r'"([^"]*)"', s))
            continue
        if name.endswith('.properties'):
            s = s.split('=', 1)[-1]
            s = re.sub(r'\\u([0-9a-fA-F]{4})', lambda m: chr(int(m.group(1), 16)), s)
        elif '=' in s and not line[:1].isspace():
            s = s.split('=', 1)[1]  # FTL "key = value"
        elif s.startswith('.') and '=' in s:
            s = s.split('=', 1)[1]  # FTL attribute
        out.append(s)
    return out


def qm_strings(blob):
    """Translations of a Qt .qm catalog (UTF-16BE records, tag 3)."""
    out = []
    pos = 16  # magic
    while pos + 5 <= len(blob):
        tag = blob[pos]
        ln = struct.unpack('>I', blob[pos + 1:pos + 5])[0]
        body = blob[pos + 5:pos + 5 + ln]
        pos += 5 + ln
        if tag != 0x69:  # only the Messages section
            continue
        m = 0
        while m < len(body):
            t = body[m]
            m += 1
            if t == 1:  # end of message
                continue
            if t == 5:  # obsolete hash, 4 bytes
                m += 4
                continue
            if t in (3, 6, 7, 8, 2, 4, 9):
                n = struct.unpack('>I', body[m:m + 4])[0]
                m += 4
                if n == 0xffffffff:
                    continue
                if t == 3:
                    out.extend(body[m:m + n].decode('utf-16-be', 'replace').split('\n'))
                m += n
                continue
            break  # unknown tag: stop rather than misparse
    return out


def pak_strings(blob):
    """Strings of a Chromium .pak resource bundle (format 4 or 5)."""
    ver = struct.unpack('<I', blob[:4])[0]
    if ver == 5:
        enc, count, aliases = struct.unpack('<IHH', blob[4:12])
        base = 12
    elif ver == 4:
        count, enc = struct.unpack('<IB', blob[4:9])
        base = 9
    else:
        return []
    ents = [struct.unpack('<HI', blob[base + 6 * i:base + 6 * i + 6]) for i in range(count + 1)]
    codec = 'utf-16-le' if enc == 2 else 'utf-8'
    out = []
    for (_, a), (_, b) in zip(ents, ents[1:]):
        out.extend(blob[a:b].decode(codec, 'replace').split('\n'))
    return out


def po_strings(text):
    """msgstr texts of a gettext .po file."""
    out, cur, in_str = [], [], False
    for line in text.split('\n') + ['']:
        s = line.strip()
        if s.startswith('msgstr'):
            in_str = True
            cur = [s.split(None, 1)[1] if ' ' in s else '']
        elif in_str and s.startswith('"'):
            cur.append(s)
        else:
            if in_str:
                val = ''.join(c.strip()[1:-1] for c in cur if c.strip().startswith('"'))
                out.extend(val.replace('\\"', '"').split('\\n'))
            in_str = False
    return out


TEX_CMD_RE = re.compile(r'\\[A-Za-z@]+\*?')
QUOTED_RE = re.compile(r'"((?:[^"\\]|\\.)*)"|\'((?:[^\'\\]|\\.)*)\'')
CODE_EXTS = {'.php', '.inc', '.js', '.py', '.lua', '.cfg', '.rb', '.yml', '.yaml', '.vim', '.ruleset'}
TEX_EXTS = {'.tex', '.dtx', '.sty', '.cls', '.ltx', '.def', '.asy', '.bib'}


def code_strings(text):
    """String literals of source-like files (fall back to the whole line)."""
    out = []
    for line in text.split('\n'):
        lits = [a or b for a, b in QUOTED_RE.findall(line)]
        out.extend(lits if lits else [line])
    return out


def text_of(name, data):
    """Candidate lines of one file given its name and bytes."""
    low = name.lower()
    if low.endswith('.gz'):
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError):
            return []
        if '/man/' in low:
            return troff_text(data.decode('utf-8', 'replace'))
        return text_of(name[:-3], data)
    ext = os.path.splitext(low)[1]
    if ext == '.mo':
        return mo_strings(data)
    if ext == '.qm':
        return qm_strings(data)
    if ext == '.pak':
        return pak_strings(data)
    if ext in ('.png', '.jpg', '.gif', '.svgz', '.pdf', '.dat', '.ttf', '.otf',
               '.woff', '.woff2', '.ogg', '.wav', '.mp3', '.webm', '.tfm', '.ods',
               '.epub', '.info', '.so', '.bin', '.db', '.ico', '.bz2', '.xz'):
        return []
    try:
        text = data.decode('utf-8')
    except UnicodeDecodeError:
        text = None
    if text is None or '\0' in text:
        # Binary catalogs named for a Chinese locale (e.g. OpenTTD .lng):
        # take their UTF-8 runs; other binaries are skipped.
        if ANY_ZH_RE.search(name):
            return [r.decode('utf-8', 'ignore') for r in UTF8_RUN_RE.findall(data)]
        return []
    if ext == '.po':
        return po_strings(text)
    if ext in ('.ftl', '.properties', '.dtd'):
        return ftl_or_props_text(text, low)
    if ext == '.json':
        try:
            return list(json_strings(json.loads(text)))
        except ValueError:
            return []
    if ext in ('.html', '.htm', '.xhtml', '.page', '.xml', '.xcd', '.xcu',
               '.docbook', '.utf8', '.svg', '.ui', '.glade', '.desktop'):
        return markup_text(text, svg=ext == '.svg')
    if ext in TEX_EXTS:
        return [TEX_CMD_RE.sub(' ', ln.lstrip('%')).replace('{', ' ').replace('}', ' ')
                for ln in text.split('\n')]
    if ext in CODE_EXTS:
        return code_strings(text)
    text = ANSI_RE.sub('', text)
    return [ln for ln in text.split('\n') if ln.strip() != '%']


ARCHIVE_EXTS = ('.xpi', '.jar', '.zip')
MAX_ARCHIVE = 256 << 20  # opened in memory; nothing useful is bigger


def members(name, data, want=lambda n: True):
    """(path, bytes) of a file, or of each wanted member of a zip archive."""
    if name.lower().endswith(ARCHIVE_EXTS):
        if len(data) > MAX_ARCHIVE:
            return
        try:
            z = zipfile.ZipFile(io.BytesIO(data))
        except zipfile.BadZipFile:
            return
        with z:
            for inner in sorted(z.namelist()):
                full = name + '/' + inner
                if not inner.endswith('/') and (want(full) or full.lower().endswith(ARCHIVE_EXTS)):
                    yield from members(full, z.read(inner), want)
    else:
        yield name, data


def keep(line):
    han = len(HAN_RE.findall(line))
    if han < MIN_HAN:
        return False
    dense = len(line) - line.count(' ')
    return han >= MIN_SHARE * dense


def variant_of(rel, default):
    if TRAD_RE.search(rel):
        return 'T'
    if SIMP_RE.search(rel):
        return 'S'
    return default


def skipped(name):
    """Packaging boilerplate that is never translated prose."""
    base = os.path.basename(name)
    return '/doc/' in name and base.startswith(('copyright', 'changelog', 'NEWS.Debian'))


def package_lines(entry):
    """Kept lines of one package, as (variant, line), in deterministic order."""
    pkg, default, scope, deb = entry
    want = (lambda n: True) if scope == 'all' else ANY_ZH_RE.search
    files = {}
    # dpkg-deb copes with every data.tar compression; stream, don't unpack.
    proc = subprocess.Popen(['dpkg-deb', '--fsys-tarfile', deb], stdout=subprocess.PIPE)
    with tarfile.open(fileobj=proc.stdout, mode='r|') as tar:
        for m in tar:
            name = m.name[2:] if m.name.startswith('./') else m.name
            if not m.isfile() or skipped(name):
                continue
            if want(name) or name.lower().endswith(ARCHIVE_EXTS):
                files[name] = tar.extractfile(m).read()
    if proc.wait() != 0:
        raise SystemExit('dpkg-deb failed on %s' % deb)
    out, seen = [], set()
    for path in sorted(files):
        for name, blob in members(path, files[path], want):
            if not want(name):
                continue
            var = variant_of(name, default)
            for line in text_of(name, blob):
                line = line.replace('\u00a0', ' ').replace('\ufffd', '')
                line = ANSI_RE.sub('', line)
                line = KEY_RE.sub('', WS_RE.sub(' ', CTRL_RE.sub(' ', line)).strip())
                if keep(line) and line not in seen:
                    seen.add(line)
                    out.append((var, line))
    return pkg, out


def main():
    plan, out_all, out_trad, stats_path = sys.argv[1:5]
    with open(plan, encoding='utf-8') as f:
        entries = [tuple(ln.split('\t')) for ln in f.read().splitlines() if ln]
    seen = set()
    with open(out_all + '.tmp', 'w', encoding='utf-8', newline='\n') as fa, \
            open(out_trad + '.tmp', 'w', encoding='utf-8', newline='\n') as ft, \
            open(stats_path, 'w', encoding='utf-8') as fs, \
            multiprocessing.Pool(min(2, os.cpu_count() or 1)) as pool:
        # imap keeps PLAN order, so the output does not depend on scheduling.
        for pkg, lines in pool.imap(package_lines, entries):
            got = {'S': 0, 'T': 0}
            for var, line in lines:
                if line in seen:
                    continue
                seen.add(line)
                got[var] += len(line.encode('utf-8')) + 1
                fa.write(line + '\n')
                if var == 'T':
                    ft.write(line + '\n')
            fs.write('%s\t%d\t%d\n' % (pkg, got['S'], got['T']))
    os.replace(out_all + '.tmp', out_all)
    os.replace(out_trad + '.tmp', out_trad)


if __name__ == '__main__':
    main()
