#!/usr/bin/env python3
"""Watermark injection test for `fanjian clean` (issue 17).

Builds paragraphs of 3 to 8 sentences from the project's own story text
(bench/fiction/dev.tsv, both columns, and the inputs of tests/cases/default.tsv;
never bench/fiction/heldout.tsv), injects notices of invented sites in
wordings of this script's own, in the paragraph's script, at sentence
boundaries, paragraph starts and ends, inside brackets and on lines of their
own (fixed seed), runs `fanjian clean` once over the whole text and measures

  (a) story characters lost: must be 0
  (b) watermark characters left: at most 5 %

usage: clean-inject.py FANJIAN ROOT   (exit 0 when both hold; prints the figures)
"""
import random
import re
import subprocess
import sys

SEED = 17

# Invented sites: (Simplified, Traditional, domain label)
SITES = [
    ("青简书苑", "青簡書苑", "qingjian"),
    ("云梦文库", "雲夢文庫", "yunmeng99"),
    ("星河阅读", "星河閱讀", "xinghe-read"),
    ("竹影书轩", "竹影書軒", "zhuying"),
    ("听雨小说网", "聽雨小說網", "tingyu"),
    ("墨砚文学", "墨硯文學", "moyan8"),
]

# Domain forms: www.x.com, m.x.net, x点com, full-width, wap.x.cc, x.org
def domains(label):
    full = "".join(chr(ord(ch) + 0xFEE0) if "!" <= ch <= "~" else ch for ch in "www." + label + ".com")
    return [
        ("www.%s.com" % label, "www.%s.com" % label),
        ("m.%s.net" % label, "m.%s.net" % label),
        ("%s点com" % label, "%s點com" % label),
        (full, full),
        ("wap.%s.cc" % label, "wap.%s.cc" % label),
        ("%s.org" % label, "%s.org" % label),
    ]

# Wordings, each in both scripts (the Traditional written by hand).
TEMPLATES = [
    ("{site}提醒您：本书最新章节请到{dom}阅读。", "{site}提醒您：本書最新章節請到{dom}閱讀。"),
    ("手机用户请访问{dom}，阅读体验更佳。", "手機用戶請訪問{dom}，閱讀體驗更佳。"),
    ("记住本站网址{dom}，下次找书不迷路。", "記住本站網址{dom}，下次找書不迷路。"),
    ("（本书首发于{site}，请支持正版阅读）", "（本書首發於{site}，請支持正版閱讀）"),
    ("【{site}】收藏本站，更新最快最稳定。", "【{site}】收藏本站，更新最快最穩定。"),
    ("请收藏：{dom}，全文免费无弹窗。", "請收藏：{dom}，全文免費無彈窗。"),
    ("百度一下{site}，第一时间阅读最新章节。", "百度一下{site}，第一時間閱讀最新章節。"),
    ("本章未完，点击下一页继续阅读。", "本章未完，點擊下一頁繼續閱讀。"),
    ("喜欢本书请收藏{site}（{dom}），更新速度最快。", "喜歡本書請收藏{site}（{dom}），更新速度最快。"),
    ("最新网址：{dom}", "最新網址：{dom}"),
    ("{site}全本小说免费下载，请认准{dom}。", "{site}全本小說免費下載，請認準{dom}。"),
    ("一秒记住{site}：{dom}，精彩小说无弹窗免费阅读！", "一秒記住{site}：{dom}，精彩小說無彈窗免費閱讀！"),
    ("本站域名已更换为{dom}，请书友们相互转告。", "本站域名已更換為{dom}，請書友們相互轉告。"),
    ("（未完待续，请访问{dom}查看后续章节）", "（未完待續，請訪問{dom}查看後續章節）"),
]


def story_sentences(root):
    simp, trad = [], []
    with open(root + "/bench/fiction/dev.tsv", encoding="utf-8") as f:
        for line in f:
            cols = line.rstrip("\n").split("\t")
            if len(cols) >= 2 and cols[0] and not cols[0].startswith("#"):
                simp.append(cols[0])
                trad.append(cols[1])
    with open(root + "/tests/cases/default.tsv", encoding="utf-8") as f:
        for line in f:
            cols = line.rstrip("\n").split("\t")
            if len(cols) == 3 and not cols[0].startswith("#") and "\\" not in cols[1]:
                (trad if cols[0].startswith("t") else simp).append(cols[1])
    # Whole sentences only: the paragraphs are built at their boundaries.
    keep = lambda s: s and s[-1] in "。！？”」…" and "\t" not in s
    return [s for s in simp if keep(s)], [s for s in trad if keep(s)]


def watermark(rng, script):
    t = TEMPLATES[rng.randrange(len(TEMPLATES))][script]
    site = SITES[rng.randrange(len(SITES))]
    dom = domains(site[2])[rng.randrange(6)][script]
    return t.format(site=site[script], dom=dom)


def build(rng, simp, trad, paragraphs):
    """Lines as lists of (text, is_watermark) segments."""
    lines = []
    for _ in range(paragraphs):
        script = rng.randrange(2)
        pool = (simp, trad)[script]
        sents = [pool[rng.randrange(len(pool))] for _ in range(rng.randint(3, 8))]
        segs = [(s, False) for s in sents]
        where = rng.choice(["boundary", "start", "end", "bracket", "own line", "two"])
        if where in ("boundary", "two"):
            segs.insert(rng.randint(1, len(segs) - 1), (watermark(rng, script), True))
        if where in ("start", "two"):
            segs.insert(0, (watermark(rng, script), True))
        if where == "end":
            segs.append((watermark(rng, script), True))
        if where == "bracket":
            w = watermark(rng, script).strip("（）。！")
            segs.insert(rng.randint(1, len(segs) - 1), ("（" + w + "）", True))
        indent = [("\u3000\u3000", False)] if rng.randrange(3) == 0 else []
        if where == "own line":
            lines.append([(watermark(rng, script), True)])
        lines.append(indent + segs)
    return lines


def main():
    fj, root = sys.argv[1], sys.argv[2]
    rng = random.Random(SEED)
    simp, trad = story_sentences(root)
    lines = build(rng, simp, trad, 400)
    text = "".join("".join(s for s, _ in segs) + "\n" for segs in lines)
    out = subprocess.run([fj, "clean", "--report"], input=text.encode(), capture_output=True,
                         check=True)
    # What went, exactly: the report's LINE:COLUMN and text of each removal.
    removed = {}
    for rep in out.stderr.decode().split("\n"):
        m = re.match(r"^standard input:(\d+):(\d+): (.*)$", rep)
        if m:
            removed.setdefault(int(m.group(1)), []).append((int(m.group(2)) - 1, m.group(3)))
    story_total = mark_total = story_lost = mark_left = 0
    expected_out = []
    examples = []
    for number, segs in enumerate(lines, 1):
        line = "".join(s for s, _ in segs)
        labels = [w for s, w in segs for _ in s]
        story_total += labels.count(False)
        mark_total += labels.count(True)
        kept = [True] * len(line)
        for column, what in removed.get(number, []):
            if line[column:column + len(what)] != what:
                print("clean-inject: line %d: the report does not match the line" % number)
                story_lost += 1
            for k in range(column, min(column + len(what), len(line))):
                kept[k] = False
        rest = "".join(ch for ch, k in zip(line, kept) if k)
        if rest or not removed.get(number):
            expected_out.append(rest + "\n")
        lost = sum(1 for k, w in enumerate(labels) if not w and not kept[k])
        left = sum(1 for k, w in enumerate(labels) if w and kept[k])
        story_lost += lost
        mark_left += left
        if (lost or left) and len(examples) < 12:
            examples.append(("LOST %d" % lost if lost else "LEFT %d" % left, line))
    if out.stdout.decode() != "".join(expected_out):
        print("clean-inject: the output is not the input less the reported removals")
        story_lost += 1
    share = 100.0 * mark_left / mark_total if mark_total else 0.0
    print("clean-inject: %d lines, %d story characters, %d watermark characters (%d wordings, seed %d)"
          % (len(lines), story_total, mark_total, len(TEMPLATES), SEED))
    print("clean-inject: story characters lost: %d; watermark characters left: %d (%.2f %%)"
          % (story_lost, mark_left, share))
    for what, line in examples:
        print("  %s: %s" % (what, line))
    sys.exit(0 if story_lost == 0 and share <= 5.0 else 1)


if __name__ == "__main__":
    main()
