#!/usr/bin/env python3
"""Generate the INPUT side of the skills-ref golden corpus.

Writes tests/skills_ref/cases/<case-id>/{cmd,description,tree/,setup.sh?,deviation?}.
The `expected/` directories are written afterwards by regenerate.sh, which runs the
real `agentskills` (skills-ref 0.1.1) on every case.

Usage:
    python3 make_cases.py            # (re)create cases/ from scratch (deletes expected/ too)
    python3 make_cases.py --readme   # rewrite README.md (case table from cases/*/description)

Fixture bytes are written exactly as given here (no newline translation), so CR, CRLF,
BOMs, invalid UTF-8, NUL and NFD text are byte-exact.  Everything a git checkout cannot
hold faithfully (symlinks, empty directories, a directory named SKILL.md, names that
differ only by case, NFD file names) is created at run time by the case's setup.sh.
"""

import os
import shutil
import sys
import unicodedata

HERE = os.path.dirname(os.path.abspath(__file__))
CASES_DIR = os.path.join(HERE, "cases")

CASES = []
IDS = set()

BODY = "\n# Instructions\n\nDo the thing.\n"


def nfc(s):
    return unicodedata.normalize("NFC", s)


def nfd(s):
    return unicodedata.normalize("NFD", s)


def sh_bytes(s):
    """Quote a (possibly non-ASCII) string for POSIX sh as printf octal escapes."""
    out = []
    for b in s.encode("utf-8"):
        c = chr(b)
        if c.isascii() and (c.isalnum() or c in "-_.+"):
            out.append(c)
        else:
            out.append("\\%03o" % b)
    return '"$(printf \'' + "".join(out) + '\')"'


def md(frontmatter, body=BODY):
    """SKILL.md text: '---\\n' + frontmatter + '---\\n' + body (frontmatter ends with \\n)."""
    if frontmatter and not frontmatter.endswith("\n"):
        frontmatter += "\n"
    return "---\n" + frontmatter + "---\n" + body


def sk(name, desc="A test skill.", extra=""):
    """Standard frontmatter with a plain name and description, plus extra raw lines."""
    fm = "name: %s\ndescription: %s\n" % (name, desc)
    if extra:
        fm += extra if extra.endswith("\n") else extra + "\n"
    return md(fm)


MINIMAL = md("name: minimal\ndescription: A minimal skill.\n")
ALL_FIELDS = md(
    "name: all-fields\n"
    "description: Extracts PDF text, fills forms, merges files. Use when handling PDFs.\n"
    "license: Apache-2.0\n"
    "compatibility: Requires python3 and network access\n"
    "metadata:\n"
    "  author: example-org\n"
    "  version: \"1.0\"\n"
    "allowed-tools: Bash(git:*) Read\n",
    body="\n# PDF tools\n\nSee [the reference](references/REFERENCE.md).\n",
)


def case(cid, cmd, description, files=None, setup=None, deviation=None):
    assert cid not in IDS, cid
    assert cid.split("-")[0] in ("validate", "props", "prompt", "cli"), cid
    assert "\n" not in description and description.strip() == description
    IDS.add(cid)
    CASES.append(dict(id=cid, cmd=cmd, description=description, files=files or {},
                      setup=setup, deviation=deviation))


def one(cid, cmd, description, dirname, text, **kw):
    """A case with a single skill directory `dirname` containing SKILL.md = text."""
    case(cid, cmd, description, {dirname + "/SKILL.md": text}, **kw)


DEV_CRASH_UTF8 = ("skills-ref crashes with a UnicodeDecodeError traceback on invalid UTF-8; "
                  "skillfold prints a clear error and exits 1 instead")
DEV_CRASH_CTRL = ("skills-ref crashes (ReaderError/AttributeError traceback) on raw control "
                  "characters in the frontmatter; skillfold prints a clear error and exits 1 instead")
DEV_CRASH_DIR = ("skills-ref crashes (IsADirectoryError traceback) on a directory named SKILL.md; "
                 "skillfold prints a clear error and exits 1 instead")
DEV_DASHES = ("skills-ref splits on '---' anywhere in the file; skillfold only treats whole '---' "
              "lines as frontmatter fences")
DEV_DASHES_OPEN = ("skills-ref only checks startswith('---') and splits on '---' anywhere; skillfold "
                   "only treats a whole '---' line as the opening fence")
DEV_SYMLINK = ("skills-ref reads through symlinks (SKILL.md or skill directory); skillfold refuses "
               "symlinked skills instead")


def define():
    # ------------------------------------------------------------------ validate: basics
    one("validate-minimal", "validate minimal", "Minimal valid skill", "minimal", MINIMAL)
    case("validate-all-fields", "validate all-fields",
         "All six allowed fields present, valid",
         {"all-fields/SKILL.md": ALL_FIELDS,
          "all-fields/references/REFERENCE.md": "# Reference\n",
          "all-fields/scripts/run.py": "print('hi')\n"})
    one("validate-dot-slash", "validate ./minimal", "Path given as ./x is echoed as x",
        "minimal", MINIMAL)
    one("validate-trailing-slash", "validate minimal/", "Path given as x/ is echoed as x",
        "minimal", MINIMAL)
    one("validate-double-slash", "validate ./minimal//", "Path ./x// is normalised to x",
        "minimal", MINIMAL)
    one("validate-dotdot-path", "validate minimal/../minimal",
        "Path with .. component is kept as given", "minimal", MINIMAL)
    one("validate-skill-md-path", "validate minimal/SKILL.md",
        "Path to the SKILL.md file itself uses the parent dir", "minimal", MINIMAL)
    case("validate-dot-inside", "validate .",
         "validate . inside a skill dir: directory name is empty",
         {"SKILL.md": md("name: inside\ndescription: Run from inside.\n")})
    case("validate-skill-md-inside", "validate SKILL.md",
         "validate SKILL.md inside a skill dir: parent is '.'",
         {"SKILL.md": md("name: inside\ndescription: Run from inside.\n")})
    case("validate-lowercase-skill-md", "validate lower",
         "Only lowercase skill.md present: accepted",
         {"lower/skill.md": md("name: lower\ndescription: Lowercase file name.\n")})
    case("validate-lowercase-skill-md-path", "validate lower/skill.md",
         "Path to lowercase skill.md file uses the parent dir",
         {"lower/skill.md": md("name: lower\ndescription: Lowercase file name.\n")})
    case("validate-both-skill-md", "validate both",
         "Both SKILL.md (valid) and skill.md (invalid) present: SKILL.md wins",
         {"both/SKILL.md": md("name: both\ndescription: Upper wins.\n")},
         setup="printf -- '---\\nname: WRONG\\n---\\n' > both/skill.md\n")
    case("validate-both-skill-md-lower-valid", "validate both",
         "Both present, SKILL.md invalid and skill.md valid: SKILL.md still wins",
         {"both/SKILL.md": md("name: BOTH\ndescription: Upper wins.\n")},
         setup="printf -- '---\\nname: both\\ndescription: lower\\n---\\n' > both/skill.md\n")
    case("validate-skill-md-upper-ext", "validate upper-ext",
         "Only SKILL.MD (uppercase extension) present: missing",
         {"upper-ext/SKILL.MD": md("name: upper-ext\ndescription: Wrong case.\n")})
    case("validate-skill-md-upper-ext-path", "validate upper-ext/SKILL.MD",
         "Path to SKILL.MD file: parent used, then SKILL.md not found",
         {"upper-ext/SKILL.MD": md("name: upper-ext\ndescription: Wrong case.\n")})
    case("validate-missing-skill-md", "validate nodoc",
         "Directory without SKILL.md",
         {"nodoc/README.md": "# Not a skill\n"})
    case("validate-empty-dir", "validate empty", "Empty directory (created by setup.sh)",
         {}, setup="mkdir empty\n")
    case("validate-file-not-skill-md", "validate minimal/README.md",
         "Path is a regular file not named SKILL.md",
         {"minimal/SKILL.md": MINIMAL, "minimal/README.md": "# readme\n"})
    one("validate-nonexistent", "validate nope", "Nonexistent path: click usage error, exit 2",
        "minimal", MINIMAL)
    one("validate-extra-arg", "validate minimal minimal",
        "Two paths given to validate: click usage error", "minimal", MINIMAL)

    # ------------------------------------------------------------------ validate: names
    one("validate-name-cyrillic", "validate мой-навык", "Cyrillic lowercase name: valid",
        "мой-навык", sk("мой-навык"))
    one("validate-name-cyrillic-upper", "validate Мой-Навык", "Cyrillic uppercase name",
        "Мой-Навык", sk("Мой-Навык"))
    one("validate-name-cjk", "validate 技能", "CJK name (caseless): valid", "技能", sk("技能"))
    one("validate-name-devanagari", "validate कौशल",
        "Devanagari name with combining vowel sign (Mc): invalid characters", "कौशल", sk("कौशल"))
    one("validate-name-devanagari-virama", "validate नमस्ते",
        "Devanagari name with virama (Mn): invalid characters", "नमस्ते", sk("नमस्ते"))
    one("validate-name-greek-final-sigma", "validate λόγος",
        "Greek lowercase name with final sigma: valid", "λόγος", sk("λόγος"))
    one("validate-name-greek-upper", "validate ΛΌΓΟΣ", "Greek uppercase name",
        "ΛΌΓΟΣ", sk("ΛΌΓΟΣ"))
    one("validate-name-turkish-dotted-upper", "validate İzmir",
        "Turkish capital dotted I: must be lowercase", "İzmir", sk("İzmir"))
    one("validate-name-turkish-dotted-lower", "validate i̇zmir",
        "i + combining dot above (lowercase of İ): invalid characters", "i̇zmir", sk("i̇zmir"))
    one("validate-name-turkish-dotless", "validate ılık", "Turkish dotless i: valid",
        "ılık", sk("ılık"))
    one("validate-name-german-sharp-s", "validate straße", "German sharp s: valid",
        "straße", sk("straße"))
    one("validate-name-arabic", "validate مهارة", "Arabic name (caseless): valid",
        "مهارة", sk("مهارة"))
    one("validate-name-digits", "validate 123", "Digits-only name (plain 123 is a string): valid",
        "123", sk("123"))
    one("validate-name-underscore", "validate my_skill", "Underscore: invalid characters",
        "my_skill", sk("my_skill"))
    one("validate-name-dot", "validate my.skill", "Dot: invalid characters",
        "my.skill", sk("my.skill"))
    one("validate-name-space", "validate myskill", "Space inside name; also dir mismatch",
        "myskill", sk("my skill"))
    one("validate-name-nbsp", "validate a-b", "NO-BREAK SPACE inside name: invalid, NFKC makes it a space",
        "a-b", sk("a\u00a0b"))
    one("validate-name-uppercase", "validate My-Skill", "Uppercase ASCII name",
        "My-Skill", sk("My-Skill"))
    one("validate-name-uppercase-dir-lower", "validate my-skill",
        "Uppercase name in lowercase dir: lowercase error and mismatch",
        "my-skill", sk("My-Skill"))
    one("validate-name-leading-hyphen", "validate -skill",
        "Leading hyphen dir given without ./: parsed as an option", "-skill", sk("-skill"))
    one("validate-name-leading-hyphen-dotslash", "validate ./-skill",
        "Leading hyphen name, path ./-skill", "-skill", sk("-skill"))
    one("validate-name-leading-hyphen-dashdash", "validate -- -skill",
        "Leading hyphen name, path after --", "-skill", sk("-skill"))
    one("validate-name-trailing-hyphen", "validate skill-", "Trailing hyphen",
        "skill-", sk("skill-"))
    one("validate-name-double-hyphen", "validate my--skill", "Consecutive hyphens",
        "my--skill", sk("my--skill"))
    one("validate-name-all-errors", "validate bad",
        "-Bad--Name- : lowercase, hyphen, double hyphen, mismatch", "bad", sk("-Bad--Name-"))
    one("validate-name-hyphen-only", "validate x", "Name '-' (quoted): hyphen errors and mismatch",
        "x", sk("'-'"))
    one("validate-name-zwj", "validate ab", "ZERO WIDTH JOINER (Cf) inside name: invalid characters",
        "ab", sk("a\u200db"))
    one("validate-name-combining-nocompose", "validate xy",
        "x + combining tilde (no precomposed form): invalid characters", "xy", sk("x\u0303y"))
    one("validate-name-hangul", "validate 기술", "Hangul name: valid", "기술", sk("기술"))
    one("validate-name-hangul-nfd", "validate 기술",
        "Hangul name as conjoining jamo (NFD) in NFC dir: valid", "기술", sk(nfd("기술")))
    one("validate-name-unicode-hyphen", "validate a-b",
        "U+2010 HYPHEN (no NFKC fold): invalid characters and mismatch", "a-b", sk("a\u2010b"))
    one("validate-nfkc-small-hyphen", "validate a-b",
        "U+FE63 SMALL HYPHEN-MINUS folds to '-': valid", "a-b", sk("a\ufe63b"))
    one("validate-nfkc-fullwidth-hyphen", "validate a--b",
        "Fullwidth hyphens fold to '--': consecutive hyphens", "a--b", sk("a\uff0d\uff0db"))
    one("validate-nfkc-khz", "validate khz", "Square kHz sign folds to 'kHz': must be lowercase",
        "khz", sk("\u3391"))
    one("validate-name-64", "validate " + "a" * 64, "Name of exactly 64 chars: valid",
        "a" * 64, sk("a" * 64))
    one("validate-name-65", "validate " + "a" * 65, "Name of 65 chars: too long",
        "a" * 65, sk("a" * 65))
    one("validate-name-64-cyrillic", "validate " + "ж" * 64,
        "64 Cyrillic chars (128 bytes): valid, length counts code points", "ж" * 64, sk("ж" * 64))
    one("validate-name-nfkc-expand-64", "validate " + "ﬃ" * 21 + "x",
        "ffi ligature x21 + x: 22 raw chars, 64 after NFKC: valid",
        "ﬃ" * 21 + "x", sk("ﬃ" * 21 + "x"))
    one("validate-name-nfkc-expand-65", "validate " + "ﬃ" * 21 + "xy",
        "ffi ligature x21 + xy: 65 after NFKC: too long",
        "ﬃ" * 21 + "xy", sk("ﬃ" * 21 + "xy"))
    one("validate-name-nfkc-expand-66", "validate " + "ﬃ" * 22,
        "ffi ligature x22: 66 after NFKC: too long", "ﬃ" * 22, sk("ﬃ" * 22))
    one("validate-name-dir-mismatch", "validate other-dir", "Name does not match directory",
        "other-dir", sk("my-skill"))
    one("validate-name-empty-quoted", "validate x", "name: \"\" : non-empty string error",
        "x", sk('""'))
    one("validate-name-empty", "validate x", "name: (no value) : non-empty string error",
        "x", md("name:\ndescription: A test skill.\n"))
    one("validate-name-blank", "validate x", "name: \"   \" : non-empty string error",
        "x", sk('"   "'))
    one("validate-name-padded", "validate padded", "Quoted name with spaces around: stripped, valid",
        "padded", sk('"  padded  "'))
    one("validate-name-x1c-padding", "validate padded",
        "Name padded with \\x1c (Python whitespace): stripped, valid", "padded", sk('"\\x1cpadded\\x1f"'))
    one("validate-name-ideographic-space", "validate padded",
        "Name padded with U+3000: stripped, valid", "padded", sk('"\\u3000padded\\u3000"'))
    one("validate-name-123-int", "validate x", "name: 123 in dir x: string '123', mismatch",
        "x", sk("123"))
    one("validate-name-null", "validate null", "name: null is the string 'null': valid",
        "null", sk("null"))
    one("validate-name-tilde", "validate x", "name: ~ is the string '~': invalid characters",
        "x", sk("~"))
    one("validate-name-true", "validate true", "name: true is the string 'true': valid",
        "true", sk("true"))
    one("validate-name-yes-upper", "validate Yes", "name: Yes stays a string: must be lowercase",
        "Yes", sk("Yes"))
    one("validate-name-list", "validate x", "name is a block list: non-empty string error",
        "x", md("name:\n  - x\ndescription: A test skill.\n"))
    one("validate-name-mapping", "validate x", "name is a mapping: non-empty string error",
        "x", md("name:\n  a: b\ndescription: A test skill.\n"))
    one("validate-name-escape-quoted", "validate café",
        "Double-quoted name with \\u00e9 escape: valid", "café", sk('"caf\\u00e9"'))
    one("validate-name-ansi", "validate x",
        "Name with ANSI escape: click strips CSI from stderr", "x", sk('"\\e[31mred\\e[0m"'))

    # NFC / NFD
    cafe_c, cafe_d = nfc("café"), nfd("café")
    one("validate-nfc-name-nfc-dir", "validate " + cafe_c, "NFC name in NFC dir: valid",
        cafe_c, sk(cafe_c))
    one("validate-nfd-name-nfc-dir", "validate " + cafe_c,
        "NFD name in NFC dir: valid (NFKC on both)", cafe_c, sk(cafe_d))
    case("validate-nfc-name-nfd-dir", "validate " + cafe_d,
         "NFC name in NFD dir (setup.sh renames): valid, echoed path is NFD",
         {"nfd-dir/SKILL.md": sk(cafe_c)},
         setup="mv nfd-dir %s\n" % sh_bytes(cafe_d))
    case("validate-nfd-name-nfd-dir", "validate " + cafe_d,
         "NFD name in NFD dir (setup.sh renames): valid",
         {"nfd-dir/SKILL.md": sk(cafe_d)},
         setup="mv nfd-dir %s\n" % sh_bytes(cafe_d))
    case("validate-nfd-name-mismatch", "validate " + cafe_d,
         "NFD dir, NFD name, but different word: message shows raw dir and NFC name",
         {"nfd-dir/SKILL.md": sk(nfd("crème"))},
         setup="mv nfd-dir %s\n" % sh_bytes(cafe_d))
    one("validate-nfkc-ligature", "validate ﬁle-tools",
        "Ligature fi in name and dir: valid (NFKC both)", "ﬁle-tools", sk("ﬁle-tools"))
    one("validate-nfkc-ligature-plain-dir", "validate file-tools",
        "Ligature fi in name, plain dir: valid", "file-tools", sk("ﬁle-tools"))
    one("validate-nfkc-ligature-dir-only", "validate ﬁle-tools",
        "Plain name, ligature dir: valid", "ﬁle-tools", sk("file-tools"))
    one("validate-nfkc-fullwidth-upper", "validate ＡＢＣ",
        "Fullwidth uppercase folds to ABC: must be lowercase", "ＡＢＣ", sk("ＡＢＣ"))
    one("validate-nfkc-fullwidth-lower", "validate abc",
        "Fullwidth lowercase folds to abc: valid", "abc", sk("ａｂｃ"))
    one("validate-nfkc-superscript", "validate x2", "x² folds to x2: valid", "x2", sk("x²"))
    one("validate-nfkc-roman", "validate xii", "Roman numeral ⅻ folds to xii: valid", "xii", sk("ⅻ"))
    one("validate-nfkc-roman-dir", "validate ⅻ", "Roman numeral ⅻ in name and dir: valid",
        "ⅻ", sk("ⅻ"))
    one("validate-nfkc-dz", "validate ǅ", "Titlecase ǅ folds to Dž: must be lowercase",
        "ǅ", sk("ǅ"))
    one("validate-nfkc-fraction", "validate x", "½ folds to 1⁄2: invalid characters and mismatch",
        "x", sk("½"))

    # ------------------------------------------------------------------ validate: description
    one("validate-desc-missing", "validate x", "description key absent",
        "x", md("name: x\n"))
    one("validate-desc-empty", "validate x", "description: with no value",
        "x", md("name: x\ndescription:\n"))
    one("validate-desc-empty-quoted", "validate x", "description: \"\"",
        "x", sk("x", '""'))
    one("validate-desc-blank", "validate x", "description of spaces only (quoted)",
        "x", sk("x", '"     "'))
    one("validate-desc-only-x1f", "validate x",
        "description \"\\x1f\" (Python whitespace): non-empty string error", "x", sk("x", '"\\x1f"'))
    one("validate-desc-1024", "validate x", "Description of exactly 1024 ASCII chars: valid",
        "x", sk("x", "a" * 1024))
    one("validate-desc-1025", "validate x", "Description of 1025 ASCII chars: too long",
        "x", sk("x", "a" * 1025))
    one("validate-desc-1024-emoji", "validate x", "Description of 1024 emoji: valid",
        "x", sk("x", "😀" * 1024))
    one("validate-desc-1025-emoji", "validate x", "Description of 1025 emoji: too long",
        "x", sk("x", "😀" * 1025))
    one("validate-desc-padded-over", "validate x",
        "Quoted description 1020 chars + 6 spaces padding: raw length counted",
        "x", sk("x", '"   ' + "a" * 1020 + '   "'))
    one("validate-desc-block-1024", "validate x",
        "| block with 1024 chars: trailing newline makes 1025", "x",
        md("name: x\ndescription: |\n  " + "a" * 1024 + "\n"))
    one("validate-desc-block-strip-1024", "validate x",
        "|- block with 1024 chars: valid", "x",
        md("name: x\ndescription: |-\n  " + "a" * 1024 + "\n"))
    one("validate-desc-block-folded", "validate x", "> block description: valid",
        "x", md("name: x\ndescription: >\n  folded\n  text\n"))
    one("validate-desc-folded-keep-over", "validate x",
        ">+ block of 1022 chars + kept blank lines: raw length 1025", "x",
        md("name: x\ndescription: >+\n  " + "a" * 1022 + "\n\n\nlicense: MIT\n"))
    one("validate-desc-multiline-plain", "validate x",
        "Multi-line plain scalar description: valid", "x",
        md("name: x\ndescription: first line\n  second line\n  third line\n"))
    one("validate-desc-list", "validate x", "description is a list",
        "x", md("name: x\ndescription:\n  - a\n"))
    one("validate-desc-ansi", "validate x", "Description with ANSI escape: valid",
        "x", sk("x", '"\\e[1mbold\\e[0m text"'))

    # ------------------------------------------------------------------ validate: compatibility
    one("validate-compat-500", "validate x", "compatibility of 500 chars: valid",
        "x", sk("x", extra="compatibility: " + "c" * 500))
    one("validate-compat-501", "validate x", "compatibility of 501 chars: too long",
        "x", sk("x", extra="compatibility: " + "c" * 501))
    one("validate-compat-empty", "validate x", "compatibility: with no value: valid",
        "x", sk("x", extra="compatibility:"))
    one("validate-compat-list", "validate x", "compatibility is a list: must be a string",
        "x", sk("x", extra="compatibility:\n  - linux\n  - mac"))
    one("validate-compat-mapping", "validate x", "compatibility is a mapping: must be a string",
        "x", sk("x", extra="compatibility:\n  os: linux"))

    # ------------------------------------------------------------------ validate: other fields
    one("validate-license-list", "validate x", "license is a list: not checked, valid",
        "x", sk("x", extra="license:\n  - MIT\n  - Apache-2.0"))
    one("validate-metadata-flat", "validate x", "Flat metadata mapping: valid",
        "x", sk("x", extra="metadata:\n  author: me\n  version: 1.0"))
    one("validate-metadata-nested", "validate x", "Nested metadata mapping: valid",
        "x", sk("x", extra="metadata:\n  a:\n    b: c\n  d: e"))
    one("validate-metadata-list", "validate x", "metadata is a list: valid",
        "x", sk("x", extra="metadata:\n  - a\n  - b"))
    one("validate-metadata-empty", "validate x", "metadata: with no value: valid",
        "x", sk("x", extra="metadata:"))
    one("validate-allowed-tools-list", "validate x", "allowed-tools as a block list: valid",
        "x", sk("x", extra="allowed-tools:\n  - Read\n  - Write"))
    one("validate-allowed-tools-flow", "validate x", "allowed-tools as a flow list: YAML error",
        "x", sk("x", extra="allowed-tools: [Read, Write]"))

    # ------------------------------------------------------------------ validate: unknown keys
    one("validate-unknown-keys-sorted", "validate x",
        "Unknown keys listed in code-point order (incl. non-ASCII)", "x",
        sk("x", extra="zeta: 1\nümlaut: 2\nbeta: 3\nAlpha: 4\n_under: 5\n1num: 6\nÉcole: 7"))
    one("validate-unknown-key-empty", "validate x", "Empty-string key ''", "x",
        sk("x", extra="'': empty"))
    one("validate-unknown-and-missing", "validate x",
        "Unknown key, missing name, blank description, long compatibility", "x",
        md("title: T\ndescription: \"  \"\ncompatibility: " + "c" * 501 + "\n"))
    one("validate-claude-code-fields", "validate x",
        "Claude Code fields (disable-model-invocation, argument-hint) are unexpected", "x",
        sk("x", extra="disable-model-invocation: true\nargument-hint: \"[file]\""))
    one("validate-no-known-keys", "validate x", "Only an unknown key: three errors", "x",
        md("foo: bar\n"))

    # ------------------------------------------------------------------ validate: YAML edge cases
    one("validate-yaml-flow-mapping-top", "validate x", "Top-level flow mapping: YAML error",
        "x", md("{name: x, description: A flow mapping skill.}\n"))
    one("validate-yaml-flow-seq-value", "validate x", "Flow sequence value (metadata): YAML error",
        "x", sk("x", extra="metadata:\n  tags: [a, b]"))
    one("validate-yaml-anchor", "validate x", "Anchor &n: YAML error",
        "x", sk("&n x"))
    one("validate-yaml-alias", "validate x", "Alias *n without anchor: YAML error",
        "x", sk("x", "*n"))
    one("validate-yaml-tag", "validate x", "Tag !!str: YAML error",
        "x", sk("!!str x"))
    one("validate-yaml-dup-key", "validate x", "Duplicate top-level key: YAML error",
        "x", md("name: x\ndescription: one\ndescription: two\n"))
    one("validate-yaml-dup-key-nested", "validate x", "Duplicate nested key: YAML error",
        "x", sk("x", extra="metadata:\n  a: 1\n  a: 2"))
    one("validate-yaml-dup-key-quoted", "validate x", "name and 'name': duplicate key",
        "x", md("name: x\n'name': x\ndescription: d\n"))
    one("validate-yaml-inconsistent-indent", "validate x",
        "Sibling mappings at different indentation: YAML error", "x",
        sk("x", extra="metadata:\n    a: b\nlicense:\n  c: d"))
    one("validate-yaml-over-indented-key", "validate x", "Over-indented key: YAML error",
        "x", md("name: x\n  description: d\n"))
    one("validate-yaml-unquoted-colon", "validate x", "Unquoted ': ' in description",
        "x", sk("x", "Use this: for things"))
    one("validate-yaml-unquoted-colon-long", "validate x",
        "Unquoted ': ' far into a long line: snippet truncated with ' ... '", "x",
        sk("x", "This skill helps with many different kinds of documents and formats. Note: it is long and keeps going for a while after the colon too"))
    one("validate-yaml-colon-no-space", "validate x", "Colon not followed by space: fine",
        "x", sk("x", "Ratio 1:2 and http://example.com"))
    one("validate-yaml-tab-after-value", "validate x", "TAB after the name value: YAML error",
        "x", md("name: x\t\ndescription: d\n"))
    one("validate-yaml-tab-separator", "validate x", "TAB as separator after 'key:'",
        "x", md("name:\tx\ndescription: d\n"))
    one("validate-yaml-at-start", "validate x", "Value starting with @: YAML error",
        "x", sk("x", "@mention the bot"))
    one("validate-yaml-backtick-start", "validate x", "Value starting with a backtick: YAML error",
        "x", sk("x", "`code` first"))
    one("validate-yaml-percent-start", "validate x", "Value starting with %: YAML error",
        "x", sk("x", "%d percent"))
    one("validate-yaml-dash-value", "validate x", "'key: - x' : sequence entries not allowed",
        "x", sk("x", "- item"))
    one("validate-yaml-unterminated-quote", "validate x", "Unterminated double quote: YAML error",
        "x", sk("x", '"never closed'))
    one("validate-yaml-merge-key", "validate x", "'<<: scalar' merge key: YAML error",
        "x", sk("x", extra="<<: foo"))
    one("validate-yaml-doc-end", "validate x", "'...' document-end marker at end: valid",
        "x", md("name: x\ndescription: d\n...\n"))
    one("validate-yaml-after-doc-end", "validate x", "Content after '...': YAML error",
        "x", md("name: x\ndescription: d\n...\nlicense: MIT\n"))
    one("validate-yaml-open-glued", "validate x", "'---name: x' on the first line: parses",
        "x", "---name: x\ndescription: Glued to the opener.\n---\n" + BODY,
        deviation=DEV_DASHES_OPEN)
    one("validate-yaml-four-dashes", "validate x", "'----' opener: stray '-' YAML error",
        "x", "----\nname: x\ndescription: d\n---\n" + BODY, deviation=DEV_DASHES_OPEN)
    one("validate-yaml-closing-trailing-space", "validate x",
        "Closing fence '---' followed by spaces: accepted", "x",
        "---\nname: x\ndescription: d\n---   \n" + BODY)
    one("validate-yaml-closing-glued-body", "validate x",
        "Closing fence directly followed by body text '---# Title'", "x",
        "---\nname: x\ndescription: d\n---# Title\n", deviation=DEV_DASHES)
    one("validate-body-hr", "validate x", "Body contains '---' horizontal rules: harmless",
        "x", sk("x") + "\n---\n\nmore\n\n---\n")
    one("validate-yaml-error-crlf", "validate x",
        "YAML error in a CRLF file: positions counted after CRLF->LF", "x",
        sk("x", "Use this: for things").replace("\n", "\r\n"))
    one("validate-yaml-error-non-ascii", "validate x",
        "YAML error after non-ASCII/astral chars: columns in code points", "x",
        sk("x", "Grüße 😀 技能 𝕏 note: more"))
    one("validate-yaml-error-long-non-ascii", "validate x",
        "YAML error snippet truncation on a long non-ASCII line", "x",
        sk("x", "Навык для обработки документов и таблиц 😀😀😀 в разных форматах: " + "ж" * 60))
    one("validate-yaml-dashes-in-value", "validate x",
        "'---' inside description truncates frontmatter: still valid, license lost", "x",
        md("name: x\ndescription: before --- after\nlicense: MIT\n"), deviation=DEV_DASHES)
    one("validate-yaml-dashes-in-value-unknown", "validate x",
        "'---' inside a value hides later unknown key from validation", "x",
        md("name: x\ndescription: a---b\nbogus: key\n"), deviation=DEV_DASHES)
    one("validate-yaml-closing-glued", "validate x", "'foo---' closes frontmatter mid-line",
        "x", "---\nname: x\ndescription: foo---\n" + BODY, deviation=DEV_DASHES)
    one("validate-yaml-not-closed", "validate x", "Frontmatter never closed",
        "x", "---\nname: x\ndescription: d\n")
    one("validate-yaml-empty-frontmatter", "validate x", "Empty frontmatter '---\\n---'",
        "x", "---\n---\n" + BODY)
    one("validate-yaml-blank-frontmatter", "validate x", "Frontmatter of blank lines only",
        "x", "---\n\n  \n---\n" + BODY)
    one("validate-yaml-list", "validate x", "Frontmatter is a YAML list",
        "x", md("- name\n- description\n"))
    one("validate-yaml-scalar", "validate x", "Frontmatter is a plain scalar",
        "x", md("just some text\n"))
    one("validate-yaml-comment-only", "validate x", "Frontmatter only a comment",
        "x", md("# name: x\n"))
    one("validate-yaml-comments", "validate x", "Comments around and after keys: valid",
        "x", md("# leading comment\nname: x # trailing\ndescription: d # note\n# end\n"))
    one("validate-yaml-indented-top", "validate x", "Whole mapping indented by 2: valid",
        "x", md("  name: x\n  description: d\n"))
    one("validate-yaml-explicit-key", "validate x", "'? key' explicit key syntax: valid",
        "x", md("? name\n: x\ndescription: d\n"))
    one("validate-empty-file", "validate x", "Empty SKILL.md (0 bytes)", "x", "")
    one("validate-no-frontmatter", "validate x", "Markdown without frontmatter",
        "x", "# Title\n\nname: x\n")
    one("validate-leading-blank-line", "validate x", "Blank line before opening ---",
        "x", "\n" + sk("x"))
    one("validate-leading-space", "validate x", "Space before opening ---",
        "x", " " + sk("x"))

    # ------------------------------------------------------------------ validate: bytes
    one("validate-crlf", "validate x", "CRLF line endings: valid",
        "x", sk("x").replace("\n", "\r\n"))
    one("validate-lone-cr", "validate x", "Lone CR line endings: valid",
        "x", sk("x").replace("\n", "\r"))
    one("validate-bom", "validate x", "UTF-8 BOM: must start with frontmatter",
        "x", "\ufeff" + sk("x"))
    one("validate-crlf-desc-1024", "validate x",
        "CRLF | block of 1024 chars: counted after CRLF->LF (1025)", "x",
        md("name: x\ndescription: |\n  " + "a" * 1024 + "\n").replace("\n", "\r\n"))
    one("validate-invalid-utf8-frontmatter", "validate x",
        "Invalid UTF-8 in frontmatter: traceback", "x",
        b"---\nname: x\ndescription: caf\xe9\n---\n" + BODY.encode(), deviation=DEV_CRASH_UTF8)
    one("validate-invalid-utf8-body", "validate x", "Invalid UTF-8 in body: traceback",
        "x", sk("x").encode() + b"\xff\xfe bad\n", deviation=DEV_CRASH_UTF8)
    one("validate-nul-frontmatter", "validate x", "NUL in frontmatter: traceback",
        "x", sk("x", "a\x00b"), deviation=DEV_CRASH_CTRL)
    one("validate-bel-frontmatter", "validate x", "BEL in frontmatter: traceback",
        "x", sk("x", "a\x07b"), deviation=DEV_CRASH_CTRL)
    one("validate-bel-body", "validate x", "BEL and NUL in body: harmless, valid",
        "x", sk("x") + "ring \x07 nul \x00\n")
    one("validate-nel-in-value", "validate x", "Raw NEL (U+0085) inside a plain value",
        "x", sk("x", "one\u0085two"))
    one("validate-ls-in-value", "validate x", "Raw LINE SEPARATOR (U+2028) inside a plain value",
        "x", sk("x", "one\u2028two"))
    case("validate-dir-named-skill-md", "validate x", "Directory named SKILL.md: traceback",
         {"x/README.md": "# x\n"}, setup="mkdir x/SKILL.md\n", deviation=DEV_CRASH_DIR)

    # ------------------------------------------------------------------ validate: symlinks
    case("validate-symlink-dir", "validate link-to-minimal",
         "Symlink to a skill dir: link name checked against name",
         {"minimal/SKILL.md": MINIMAL}, setup="ln -s minimal link-to-minimal\n",
         deviation=DEV_SYMLINK)
    case("validate-symlink-dir-same-name", "validate minimal",
         "Symlink named like the skill pointing to a differently named dir: valid",
         {"real/SKILL.md": MINIMAL}, setup="ln -s real minimal\n", deviation=DEV_SYMLINK)
    case("validate-symlink-skill-md", "validate minimal",
         "SKILL.md is a symlink to a file elsewhere: read through",
         {"store/minimal.md": MINIMAL, "minimal/README.md": "# x\n"},
         setup="ln -s ../store/minimal.md minimal/SKILL.md\n", deviation=DEV_SYMLINK)
    case("validate-symlink-skill-md-broken", "validate minimal",
         "SKILL.md is a dangling symlink: missing",
         {"minimal/README.md": "# x\n"},
         setup="ln -s ../nowhere.md minimal/SKILL.md\n", deviation=DEV_SYMLINK)

    # ------------------------------------------------------------------ read-properties
    one("props-minimal", "read-properties minimal", "Minimal skill as JSON", "minimal", MINIMAL)
    case("props-all-fields", "read-properties all-fields", "All fields: fixed key order",
         {"all-fields/SKILL.md": ALL_FIELDS})
    one("props-key-order", "read-properties x",
        "Fields written in reverse order: output order is fixed", "x",
        md("metadata:\n  k: v\nallowed-tools: Read\ncompatibility: any\nlicense: MIT\n"
           "description: d\nname: x\n"))
    one("props-non-ascii", "read-properties x",
        "Non-ASCII: ensure_ascii escapes, astral chars as surrogate pairs", "x",
        sk("x", "Grüße 技能 café 😀 𝕏 — ok", extra="metadata:\n  ключ: значение"))
    one("props-control-escapes", "read-properties x",
        "Escapes: quote, backslash, tab, newline, CR, BS, FF, DEL, ESC, slash", "x",
        sk("x", '"q\\" b\\\\ t\\t n\\n r\\r b\\b f\\f del\\x7f esc\\e slash/ end"'))
    one("props-nel-ls-in-value", "read-properties x",
        "Raw NEL / U+2028 / U+2029 inside plain values", "x",
        sk("x", "one\u0085two", extra="license: a\u2028b\ncompatibility: c\u2029d"))
    one("props-yaml-escapes", "read-properties x",
        "Double-quoted YAML escapes: \\u \\x \\N \\_ \\L \\P \\0 \\U", "x",
        sk("x", '"e\\u00e9 A\\x41 nel\\N nbsp\\_ ls\\L ps\\P nul\\0 astral\\U0001F600"'))
    one("props-dotslash-path", "read-properties ./minimal/", "Path ./x/ accepted",
        "minimal", MINIMAL)
    one("props-skill-md-path", "read-properties minimal/SKILL.md", "Path to SKILL.md file",
        "minimal", MINIMAL)
    one("props-no-validation", "read-properties Bad_Dir",
        "Invalid name, unknown key, over-long description: no validation", "Bad_Dir",
        sk("-Bad--Name-", "d" * 1100, extra="unknown: key\ncompatibility: " + "c" * 600))
    one("props-strip", "read-properties x", "name/description stripped (incl. \\x1c, U+3000)",
        "x", sk('"  \\x1c x \\u3000"', '"\\t padded description \\x1f "'))
    one("props-nfkc-not-applied", "read-properties x", "Ligature/fullwidth name printed raw",
        "x", sk("ﬁle-ＡＢＣ"))
    one("props-nfd", "read-properties x", "NFD name printed decomposed", "x", sk(nfd("café")))
    one("props-name-null-true", "read-properties x", "name null, description true: strings",
        "x", sk("null", "true", extra="license: 1.0"))
    one("props-block-literal", "read-properties x", "| block description keeps one trailing \\n",
        "x", md("name: x\ndescription: |\n  line one\n  line two\n"))
    one("props-block-folded", "read-properties x", "> block description folds lines",
        "x", md("name: x\ndescription: >\n  line one\n  line two\n\n  para two\n"))
    one("props-block-literal-strip", "read-properties x", "|- block description",
        "x", md("name: x\ndescription: |-\n  line one\n  line two\n\n"))
    one("props-block-folded-keep", "read-properties x",
        ">+ block description keeps trailing newlines (then stripped)", "x",
        md("name: x\ndescription: >+\n  line one\n  line two\n\n\nlicense: MIT\n"))
    one("props-block-license-keep", "read-properties x",
        "|+ block license keeps trailing newlines (not stripped)", "x",
        sk("x", extra="license: |+\n  MIT\n\n\ncompatibility: >-\n  needs\n  git"))
    one("props-multiline-plain", "read-properties x", "Multi-line plain scalar folds to spaces",
        "x", md("name: x\ndescription: first line\n  second line\n\n  new para\n"))
    one("props-quoted-styles", "read-properties x", "Single- and double-quoted scalars",
        "x", sk("'x'", "'it''s \"quoted\"'", extra='license: "tab\\there"'))
    one("props-metadata-flat", "read-properties x", "Flat metadata mapping",
        "x", sk("x", extra="metadata:\n  author: me\n  version: 1.0\n  empty:"))
    one("props-metadata-nested", "read-properties x",
        "Nested metadata values become Python reprs", "x",
        sk("x", extra="metadata:\n  a:\n    b: c\n    d: e\n  l:\n    - x\n    - it's\n"
                      "  q:\n    - say \"hi\"\n    - both ' and \"\n    - back\\slash\n  z: plain"))
    one("props-metadata-list", "read-properties x", "metadata is a list: printed as list",
        "x", sk("x", extra="metadata:\n  - a\n  - b"))
    one("props-metadata-string", "read-properties x", "metadata is a string",
        "x", sk("x", extra="metadata: just text"))
    one("props-metadata-empty", "read-properties x", "metadata: with no value is omitted",
        "x", sk("x", extra="metadata:"))
    one("props-empty-optional", "read-properties x",
        "license/compatibility/allowed-tools empty: present as \"\"", "x",
        sk("x", extra="license:\ncompatibility:\nallowed-tools:"))
    one("props-allowed-tools-list", "read-properties x", "allowed-tools list printed as list",
        "x", sk("x", extra="allowed-tools:\n  - Read\n  - Bash(git:*)"))
    one("props-allowed-tools-string", "read-properties x", "allowed-tools string",
        "x", sk("x", extra="allowed-tools: Bash(git:*) Read Write"))
    one("props-missing-name", "read-properties x", "Missing name", "x",
        md("description: d\n"))
    one("props-missing-both", "read-properties x",
        "Missing description checked before name type", "x", md("name: \"\"\n"))
    one("props-name-list", "read-properties x", "name is a list: non-empty string error",
        "x", md("name:\n  - x\ndescription: d\n"))
    one("props-desc-blank", "read-properties x", "Blank description", "x", sk("x", '"  "'))
    one("props-desc-only-x1f", "read-properties x", "Description only \\x1f: blank",
        "x", sk("x", '"\\x1f"'))
    case("props-not-found", "read-properties nodoc", "No SKILL.md: error echoes the path",
         {"nodoc/README.md": "# nothing\n"})
    case("props-not-found-dotslash", "read-properties ./nodoc/",
         "No SKILL.md, path ./x/: echoed normalised", {"nodoc/README.md": "# nothing\n"})
    case("props-file-path", "read-properties minimal/README.md",
         "Path to a non-SKILL.md file", {"minimal/SKILL.md": MINIMAL,
                                         "minimal/README.md": "# r\n"})
    one("props-nonexistent", "read-properties nope", "Nonexistent path: exit 2",
        "minimal", MINIMAL)
    one("props-invalid-yaml", "read-properties x", "Invalid YAML message",
        "x", sk("x", "Use this: for things"))
    one("props-not-mapping", "read-properties x", "Frontmatter a list", "x", md("- a\n"))
    one("props-no-frontmatter", "read-properties x", "No frontmatter", "x", "hello\n")
    one("props-crlf", "read-properties x", "CRLF with | block: only \\n in values",
        "x", md("name: x\ndescription: |\n  one\n  two\n").replace("\n", "\r\n"))
    one("props-lone-cr", "read-properties x", "Lone CR with | block",
        "x", md("name: x\ndescription: |\n  one\n  two\n").replace("\n", "\r"))
    one("props-dashes-in-value", "read-properties x", "'---' in description truncates it",
        "x", md("name: x\ndescription: before --- after\nlicense: MIT\n"), deviation=DEV_DASHES)
    one("props-invalid-utf8", "read-properties x", "Invalid UTF-8: traceback",
        "x", b"---\nname: x\ndescription: \xc3\x28\n---\n", deviation=DEV_CRASH_UTF8)
    case("props-dir-named-skill-md", "read-properties x", "Directory named SKILL.md: traceback",
         {"x/README.md": "# x\n"}, setup="mkdir x/SKILL.md\n", deviation=DEV_CRASH_DIR)
    case("props-lowercase-skill-md", "read-properties lower", "Only skill.md present",
         {"lower/skill.md": md("name: lower\ndescription: Lowercase file.\n")})
    case("props-symlink-skill-md", "read-properties minimal", "SKILL.md symlink: read through",
         {"store/minimal.md": MINIMAL, "minimal/README.md": "# x\n"},
         setup="ln -s ../store/minimal.md minimal/SKILL.md\n", deviation=DEV_SYMLINK)
    case("props-symlink-dir", "read-properties link-to-minimal",
         "Symlink to a skill dir: read through", {"minimal/SKILL.md": MINIMAL},
         setup="ln -s minimal link-to-minimal\n", deviation=DEV_SYMLINK)
    case("props-dot-inside", "read-properties .", "read-properties . inside a skill dir",
         {"SKILL.md": md("name: inside\ndescription: Run from inside.\n")})

    # ------------------------------------------------------------------ to-prompt
    two = {"minimal/SKILL.md": MINIMAL, "all-fields/SKILL.md": ALL_FIELDS}
    three = dict(two)
    three["lower/skill.md"] = md("name: lower\ndescription: Lowercase file name.\n")
    one("prompt-one", "to-prompt minimal", "One skill", "minimal", MINIMAL)
    case("prompt-two", "to-prompt minimal all-fields", "Two skills", two)
    case("prompt-three", "to-prompt minimal all-fields lower",
         "Three skills, third uses skill.md", three)
    case("prompt-order", "to-prompt lower all-fields minimal", "Argument order is kept", three)
    case("prompt-duplicate", "to-prompt minimal ./minimal minimal/SKILL.md",
         "Same skill three ways: no de-duplication", {"minimal/SKILL.md": MINIMAL})
    case("prompt-error-second", "to-prompt minimal nodoc",
         "Second skill has no SKILL.md: error with absolute path, no partial output",
         {"minimal/SKILL.md": MINIMAL, "nodoc/README.md": "# none\n"})
    case("prompt-error-second-yaml", "to-prompt minimal bad",
         "Second skill has invalid YAML: no partial output",
         {"minimal/SKILL.md": MINIMAL, "bad/SKILL.md": sk("bad", "a: b")})
    case("prompt-error-second-missing-desc", "to-prompt minimal bad",
         "Second skill lacks description", {"minimal/SKILL.md": MINIMAL,
                                           "bad/SKILL.md": md("name: bad\n")})
    case("prompt-nonexistent-second", "to-prompt minimal nope",
         "Second path does not exist: click usage error", {"minimal/SKILL.md": MINIMAL})
    case("prompt-file-path", "to-prompt minimal/README.md",
         "Path to a non-SKILL.md file: absolute path in error",
         {"minimal/SKILL.md": MINIMAL, "minimal/README.md": "# r\n"})
    one("prompt-html-escape", "to-prompt x", "HTML escaping of & < > \" ' in name and description",
        "x", sk("\"x&<y>\\\"'z\"", "Tom & Jerry <b>bold</b> \"dq\" 'sq' &amp;"))
    one("prompt-dir-ampersand", "to-prompt a&b", "Directory with &: location not escaped",
        "a&b", sk("a&b", "Ampersand dir <tag>."))
    one("prompt-ansi", "to-prompt x", "ANSI CSI in description stripped by click (not a TTY)",
        "x", sk("x", '"\\e[31mred\\e[0m and \\e[1;4mbold\\e[m plain \\e]0;title\\a"'))
    one("prompt-multiline", "to-prompt x", "Multi-line | description keeps inner newlines",
        "x", md("name: x\ndescription: |\n  line one\n    indented\n  <line> three\n"))
    one("prompt-no-validation", "to-prompt Bad_Dir", "Invalid skill still rendered",
        "Bad_Dir", sk("-Bad--Name-", "d" * 1100, extra="unknown: key"))
    one("prompt-nfkc-raw", "to-prompt ﬁle-tools", "Ligature name printed raw",
        "ﬁle-tools", sk("ﬁle-tools", "Ｆｕｌｌ width ½."))
    one("prompt-non-ascii", "to-prompt 技能", "Non-ASCII printed raw (not escaped)",
        "技能", sk("技能", "Grüße 😀 — ok"))
    one("prompt-skill-md-path", "to-prompt minimal/SKILL.md", "Path to SKILL.md file",
        "minimal", MINIMAL)
    case("prompt-dot-inside", "to-prompt .", "to-prompt . inside a skill dir",
         {"SKILL.md": md("name: inside\ndescription: Run from inside.\n")})
    case("prompt-dotdot", "to-prompt sub/..", "Path with .. is resolved",
         {"SKILL.md": md("name: inside\ndescription: Run from inside.\n"),
          "sub/README.md": "# sub\n"})
    case("prompt-symlink-dir", "to-prompt link-to-minimal",
         "Symlink to skill dir: location shows the resolved real dir",
         {"minimal/SKILL.md": MINIMAL}, setup="ln -s minimal link-to-minimal\n",
         deviation=DEV_SYMLINK)
    case("prompt-symlink-skill-md", "to-prompt minimal",
         "SKILL.md is a symlink: location keeps SKILL.md in the skill dir",
         {"store/minimal.md": MINIMAL, "minimal/README.md": "# x\n"},
         setup="ln -s ../store/minimal.md minimal/SKILL.md\n", deviation=DEV_SYMLINK)
    one("prompt-crlf", "to-prompt x", "CRLF file with | block", "x",
        md("name: x\ndescription: |\n  one\n  two\n").replace("\n", "\r\n"))
    one("prompt-whitespace-desc", "to-prompt x", "Tabs, NBSP and \\x1c in description",
        "x", sk("x", '"\\x1c lead\\ttab\\u00a0nbsp trail \\x1d"'))
    case("prompt-invalid-utf8-second", "to-prompt minimal bad",
         "Invalid UTF-8 in second skill: traceback",
         {"minimal/SKILL.md": MINIMAL,
          "bad/SKILL.md": b"---\nname: bad\ndescription: \xff\n---\n"},
         deviation=DEV_CRASH_UTF8)
    case("prompt-dir-named-skill-md", "to-prompt x", "Directory named SKILL.md: traceback",
         {"x/README.md": "# x\n"}, setup="mkdir x/SKILL.md\n", deviation=DEV_CRASH_DIR)
    one("prompt-nul-frontmatter", "to-prompt x", "NUL in frontmatter: traceback",
        "x", sk("x", "a\x00b"), deviation=DEV_CRASH_CTRL)
    one("prompt-dashes-in-value", "to-prompt x", "'---' inside description truncates it",
        "x", sk("x", "Use a --- separator here"), deviation=DEV_DASHES)

    # ------------------------------------------------------------------ CLI surface
    case("cli-version", "--version", "agentskills --version", {})
    case("cli-no-args", "", "agentskills with no arguments: help on stderr, exit 2", {})
    case("cli-help", "--help", "agentskills --help", {})
    case("cli-validate-help", "validate --help", "agentskills validate --help", {})
    case("cli-read-properties-help", "read-properties --help", "agentskills read-properties --help", {})
    case("cli-to-prompt-help", "to-prompt --help", "agentskills to-prompt --help", {})
    case("cli-validate-no-arg", "validate", "validate with no path", {})
    case("cli-read-properties-no-arg", "read-properties", "read-properties with no path", {})
    case("cli-to-prompt-no-arg", "to-prompt", "to-prompt with no path", {})
    case("cli-unknown-command", "lint x", "Unknown subcommand", {})
    case("cli-dash-arg", "validate -l", "Argument starting with -: no such option", {})
    case("cli-unknown-option", "to-prompt --json minimal", "Unknown long option",
         {"minimal/SKILL.md": MINIMAL})


def write_case(c):
    d = os.path.join(CASES_DIR, c["id"])
    os.makedirs(d)
    with open(os.path.join(d, "cmd"), "wb") as f:
        f.write(c["cmd"].encode("utf-8") + b"\n")
    with open(os.path.join(d, "description"), "wb") as f:
        f.write(c["description"].encode("utf-8") + b"\n")
    if c["files"]:
        tree = os.path.join(d, "tree")
        for rel, content in sorted(c["files"].items()):
            p = os.path.join(tree, rel)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            if isinstance(content, str):
                content = content.encode("utf-8")
            with open(p, "wb") as f:
                f.write(content)
            os.chmod(p, 0o644)
    if c["setup"]:
        p = os.path.join(d, "setup.sh")
        with open(p, "wb") as f:
            f.write(("#!/bin/sh\n# Run with cwd = the copied tree/.\nset -eu\n"
                     + c["setup"]).encode("utf-8"))
        os.chmod(p, 0o755)
    if c["deviation"]:
        with open(os.path.join(d, "deviation"), "wb") as f:
            f.write(c["deviation"].encode("utf-8") + b"\n")


def check_portability(c):
    """No two names in one tree directory may collide case-insensitively or under NFC."""
    seen = {}
    for rel in c["files"]:
        parts = rel.split("/")
        for i in range(len(parts)):
            parent = "/".join(parts[:i])
            key = (parent, nfc(parts[i]).casefold())
            prev = seen.setdefault(key, parts[i])
            assert prev == parts[i], "%s: %r vs %r collide" % (c["id"], prev, parts[i])
            assert parts[i] == nfc(parts[i]), "%s: NFD file name %r (use setup.sh)" % (
                c["id"], parts[i])


README_HEAD = """\
# skills-ref golden corpus

Golden tests captured from the **real** reference tool `skills-ref` 0.1.1 (PyPI package
`skills-ref`, console command `agentskills`). skillfold must reproduce `stdout`, `stderr` and the
exit status of every case byte for byte, except where a case is marked as a deviation (below).

Do not edit `cases/` by hand: the inputs come from `make_cases.py` and the outputs from the real
tool. `.gitattributes` marks everything here `-text`, so CRLF, CR, BOM, invalid UTF-8 and NUL
bytes in fixtures and goldens are never converted on checkout.

## Regenerating

    bash tests/skills_ref/regenerate.sh

The script:
1. runs `make_cases.py` (deletes and recreates `cases/*/` inputs: `cmd`, `description`, `tree/`,
   `setup.sh`, `deviation`), then rewrites this README (the case table comes from the
   `description` files);
2. creates a throwaway venv under `mktemp -d` and installs skills-ref with its dependencies from
   `requirements.lock` (`pip install --no-deps --require-hashes --only-binary :all: -r ...`);
3. runs every case (see below) and writes `expected/`;
4. deletes the venv and all temporary copies.

It needs `python3` (or the interpreter named by `$PYTHON`) **3.11**: unicodedata 14.0.0 and the
3.11 traceback format are baked into the goldens, which were captured with CPython 3.11.7 on Linux
(set `SKILLS_REF_ANY_PYTHON=1` to override the check). It also needs access to PyPI. It is
deterministic: two runs leave `cases/` byte-identical.

## Case layout

    cases/<case-id>/
      cmd            one line: the arguments after `agentskills`, separated by single spaces
      description    one line: what the case exercises
      tree/          input files (absent when the case needs none)
      setup.sh       optional, executable: run with cwd = the copied tree before the command
      deviation      optional, one line: why skillfold deliberately differs (see below)
      expected/stdout
      expected/stderr
      expected/status   exit code as decimal + newline

Running a case (what regenerate.sh does, and what the skillfold test harness must do):
1. Copy `tree/` (or an empty directory if there is none) to a fresh temporary directory whose
   path contains no symlinks (take `realpath`); call that absolute path ROOT.
2. If `setup.sh` exists, run it with cwd = ROOT. It creates what git cannot store: symlinks,
   empty directories, a directory named `SKILL.md`, a `skill.md` next to a `SKILL.md` (names
   differing only by case) and NFD-normalised directory names.
3. Split `cmd` on spaces (no quoting or escaping exists; no argument contains a space; an empty
   `cmd` line means no arguments; arguments may contain non-ASCII UTF-8 bytes, e.g. NFD text) and
   run `agentskills ARGS...` (skillfold: `skillfold ARGS...`) with cwd = ROOT, stdin from
   `/dev/null`, stdout and stderr redirected to files (not a TTY), and the environment
   `LC_ALL=C.UTF-8 PYTHONIOENCODING=utf-8 PYTHONHASHSEED=0` (plus `PATH` and `HOME`; nothing else,
   in particular no `COLUMNS`).
4. In stdout and stderr replace every occurrence of ROOT with the literal placeholder `{ROOT}`
   (to-prompt prints absolute, symlink-resolved locations and absolute paths in its errors).
   Tracebacks additionally get the venv directory replaced by `{VENV}` and the base Python
   installation prefix (`sys.base_prefix`) by `{PYTHON}`; those appear only in crash cases.
5. Compare with `expected/`.

## Deviations

A case directory containing a file `deviation` records the reference output anyway, but
skillfold deliberately behaves differently there; the file says why in one line. Categories:
- skills-ref crashes with a Python traceback (invalid UTF-8, raw control characters in the
  frontmatter, a directory named `SKILL.md`): skillfold prints a clear error and exits 1;
- `---` inside a value (skills-ref splits on it anywhere; skillfold only treats whole `---` lines
  as fences);
- symlinked `SKILL.md` or skill directory (skills-ref reads through; skillfold refuses).

Tests should compare these cases only loosely (e.g. exit status), or check skillfold's own
expected behaviour separately.

## Cases
"""


def write_readme():
    rows = []
    dev = 0
    for cid in sorted(os.listdir(CASES_DIR)):
        d = os.path.join(CASES_DIR, cid)
        with open(os.path.join(d, "description"), encoding="utf-8") as f:
            desc = f.read().strip()
        with open(os.path.join(d, "cmd"), encoding="utf-8") as f:
            cmd = f.read().rstrip("\n")
        status = ""
        sp = os.path.join(d, "expected", "status")
        if os.path.exists(sp):
            with open(sp) as f:
                status = f.read().strip()
        mark = ""
        if os.path.exists(os.path.join(d, "deviation")):
            mark = "deviation"
            dev += 1
        cell = lambda s: s.replace("|", "\\|")
        shown = ("agentskills " + cmd).strip()
        rows.append("| `%s` | `%s` | %s | %s | %s |" % (
            cid, cell(shown).replace("`", "'"), status, mark, cell(desc)))
    out = README_HEAD
    out += "\n%d cases, %d marked as deviations.\n\n" % (len(rows), dev)
    out += "| case | command | exit | | description |\n|---|---|---|---|---|\n"
    out += "\n".join(rows) + "\n"
    with open(os.path.join(HERE, "README.md"), "w", encoding="utf-8", newline="\n") as f:
        f.write(out)


def main():
    if sys.argv[1:] == ["--readme"]:
        write_readme()
        return
    if sys.argv[1:]:
        sys.exit("usage: make_cases.py [--readme]")
    define()
    for c in CASES:
        check_portability(c)
    if os.path.isdir(CASES_DIR):
        shutil.rmtree(CASES_DIR)
    os.makedirs(CASES_DIR)
    for c in CASES:
        write_case(c)
    print("make_cases.py: wrote %d cases" % len(CASES))


if __name__ == "__main__":
    main()
