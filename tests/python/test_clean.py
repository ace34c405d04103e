"""fanjian.clean(): span-level boilerplate removal, as the library and the CLI do it."""
import fanjian
from fjtest import run, test

NOTICE = "天才一秒记住本站地址：www.biquge.cc 最快更新！"


@test("python clean: a notice inside a paragraph goes, the story stays")
def inside():
    text = "他转身离去。" + NOTICE + "众人面面相觑。\n"
    assert fanjian.clean(text) == "他转身离去。众人面面相觑。\n", fanjian.clean(text)


@test("python clean: a line that is wholly a notice goes with its line ending; the rest is kept")
def whole_lines():
    text = "第一章 开始\r\n（本章完）\r\n" + NOTICE + "\n他说：“报！”\n最后一行"
    assert fanjian.clean(text) == "第一章 开始\r\n他说：“报！”\n最后一行"
    assert fanjian.clean("") == ""
    story = "他记住了那个网址，转身离开。\n本站是终点站。"
    assert fanjian.clean(story) == story


@test("python clean: rules= adds rules; a bad rules text is a ValueError naming its line")
def rules():
    assert fanjian.clean("他说。夜空中最亮的星。", rules="phrase 10 夜空中最亮") == "他说。"
    assert fanjian.clean("他说。夜空中最亮的星。") == "他说。夜空中最亮的星。"
    try:
        fanjian.clean("x", rules="threshold 10\nphrase ten 收藏\n")
    except ValueError as e:
        assert "rules:2:" in str(e), str(e)
    else:
        raise AssertionError("no ValueError")
    for bad in (b"x", 3):
        try:
            fanjian.clean(bad)
        except TypeError:
            pass
        else:
            raise AssertionError("no TypeError for %r" % (bad,))
    try:
        fanjian.clean("x", rules=b"phrase 1 x")
    except TypeError:
        pass
    else:
        raise AssertionError("no TypeError for bytes rules")


@test("python clean: lone surrogates and long lines pass through")
def odd_text():
    s = "a\udc80b。" + NOTICE
    assert fanjian.clean(s) == "a\udc80b。"
    long_line = "他抬头看着天空。" * 20000 + NOTICE + "她笑了。\n"
    assert fanjian.clean(long_line) == "他抬头看着天空。" * 20000 + "她笑了。\n"


run()
