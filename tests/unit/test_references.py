"""Every reference a reader may follow resolves inside the repository.

Three kinds, read from the source (no import):

- a doc section: ``docs/x.md, "Heading"`` or ``docs/x.md "Heading"`` (a
  comma or not; more headings may follow, ``, "Other"``), in a docstring,
  a comment or a doc, names a heading that docs/x.md has;
- a protocol section: ``Name, "Section"`` where Name is one of the
  protocol documents docs/protocols.md names, cites a section that
  docs/protocols.md lists under that name ("Sections");
- a package's module index: an ``__init__.py`` docstring that names a file
  (``x.py``) names one of the package's files, and one that indexes the
  package (a bulleted list of ``_module`` entries, or a "Layout"
  paragraph) names every module of the package, and only those.

Each check runs on a planted dead reference first (shown in the test),
so a check that finds nothing cannot pass by reading nothing.
"""

import ast
import os
import re

from twisted.trial import unittest

from .._paths import REPO_ROOT

DOCS = os.path.join(REPO_ROOT, "docs")
SRC = os.path.join(REPO_ROOT, "src")
# this module plants dead references on purpose; the grep test, forbidden words
SKIPPED = {os.path.join("tests", "unit", "test_references.py"),
           os.path.join("tests", "unit", "test_no_private_citations.py")}


def sources():
    """{path relative to the repository: text} of every Python file under
    src/, tests/, misc/ and bench/, every Markdown file under docs/, and
    the README."""
    found = {}
    for top in ("src", "tests", "misc", "bench", "docs"):
        for dirpath, dirnames, filenames in os.walk(os.path.join(REPO_ROOT, top)):
            dirnames[:] = [d for d in dirnames if d not in ("__pycache__", "_build")]
            for name in filenames:
                if name.endswith((".py", ".md")):
                    path = os.path.join(dirpath, name)
                    rel = os.path.relpath(path, REPO_ROOT)
                    if rel not in SKIPPED:
                        with open(path, encoding="utf-8") as f:
                            found[rel] = f.read()
    with open(os.path.join(REPO_ROOT, "README.md"), encoding="utf-8") as f:
        found["README.md"] = f.read()
    return found


def flatten(text):
    """``text`` as one line: comment markers at line starts and line breaks
    folded into single spaces, so that a citation wrapped over lines of a
    comment or a docstring reads as written."""
    text = re.sub(r"\n[ \t]*#+[ \t]?", " ", text)
    text = re.sub(r"\n[ \t]*(?:[>*-][ \t])?", " ", text)
    return re.sub(r"[ \t]+", " ", text)


# a title starts with a letter, a digit or markup: not with a space (which
# would be the end of one string literal and the start of the next)
_QUOTED = r'"[^"\s][^"]{0,119}"(?:(?:, | and | or )"[^"\s][^"]{0,119}")*'
DOC_CITATION = re.compile(r"docs/([\w./-]+\.md),? (" + _QUOTED + ")")


def doc_citations(text):
    """[(doc file, heading)] that ``text`` cites."""
    found = []
    for m in DOC_CITATION.finditer(flatten(text)):
        for title in re.findall(r'"([^"]+)"', m.group(2)):
            found.append((m.group(1), title))
    return found


def _plain_heading(line):
    """A Markdown heading's text: ``# `x` and y`` -> ``x and y``."""
    return " ".join(line.lstrip("#").replace("`", "").split())


def headings(path):
    """The titles a citation may use for the headings of a Markdown file
    (code blocks left out): each heading's whole text, and its title
    proper, the text before a parenthesis or a colon (``Modes
    (`wormhole._landing.landed_mode`)`` is cited as "Modes", ``Resume: the
    `resume` feature`` as "Resume"), and the bold labels that open its
    list items and paragraphs (``**No IP addresses.**``)."""
    found, fenced = set(), False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("```"):
                fenced = not fenced
            elif not fenced and re.match(r"#{1,6} ", line):
                heading = _plain_heading(line)
                found.add(heading)
                found.add(re.split(r" \(|: ", heading)[0])
            elif not fenced:
                # a bold label opening a list item or a paragraph, the
                # docs' named paragraphs ("- **Message size.** Data ...")
                label = re.match(r"(?:- )?\*\*([^*]+?)\.?\*\*", line)
                if label:
                    found.add(" ".join(label.group(1).replace("`", "").split()))
    return found


def dead_doc_citations(texts, docs=DOCS):
    """[(where, doc file, heading)] of the doc citations in ``texts``
    ({where: text}) whose file or heading does not exist under ``docs``."""
    cache, dead = {}, []
    for where, text in sorted(texts.items()):
        for doc, title in doc_citations(text):
            path = os.path.join(docs, doc)
            if doc not in cache:
                cache[doc] = headings(path) if os.path.exists(path) else None
            if cache[doc] is None or " ".join(title.replace("`", "").split()) not in cache[doc]:
                dead.append((where, doc, title))
    return dead


PROTOCOLS = os.path.join(DOCS, "protocols.md")


def protocol_sections(path=PROTOCOLS):
    """{document name: {section title}} from docs/protocols.md: the names
    of its table's first column, the titles listed under "### Name"."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    names = re.findall(r"^\| ([A-Z][\w -]+?) \|", text, re.M)
    sections = {name: set() for name in names if name != "name"}
    current = None
    for line in text.splitlines():
        m = re.match(r"### (.+)$", line)
        if m:
            current = m.group(1).strip()
            sections.setdefault(current, set())
        elif current and line.startswith("- "):
            sections[current].add(" ".join(line[2:].replace("`", "").split()))
        elif line.startswith("## "):
            current = None
    return sections


def protocol_citations(text, names):
    """[(document name, section)] that ``text`` cites, for the document
    ``names``."""
    pattern = re.compile(r"(?<![\w-])(" + "|".join(re.escape(n) for n in names)
                         + r"),? (" + _QUOTED + ")")
    found = []
    for m in pattern.finditer(flatten(text)):
        for title in re.findall(r'"([^"]+)"', m.group(2)):
            found.append((m.group(1), title))
    return found


def dead_protocol_citations(texts, sections):
    """[(where, name, section)] of the citations in ``texts`` that name a
    section ``sections`` does not list for that document."""
    dead = []
    for where, text in sorted(texts.items()):
        for name, title in protocol_citations(text, sections):
            if " ".join(title.replace("`", "").split()) not in sections[name]:
                dead.append((where, name, title))
    return dead


def package_modules(directory):
    """The modules and subpackages of the package in ``directory``."""
    found = set()
    for name in os.listdir(directory):
        path = os.path.join(directory, name)
        if name.endswith(".py") and name not in ("__init__.py", "__main__.py"):
            found.add(name[:-3])
        elif os.path.isfile(os.path.join(path, "__init__.py")):
            found.add(name)
    return found


def index_entries(docstring):
    """The modules an ``__init__`` docstring indexes, or None when it is
    no index. An index is a docstring with a bulleted list that starts
    with a ``name``, or a "Layout" paragraph; its entries are the
    ``name`` s that a colon follows, or " and " and another entry
    (``- ``_tcp`` and ``_websocket``: the glue; ``_splice``: ...``)."""
    if not re.search(r"^- ``\w+``", docstring, re.M) and "Layout" not in docstring:
        return None
    return set(re.findall(r"``(\w+)``(?=:|\s+and\s+``)", docstring))


def index_problems(directory, docstring):
    """What an ``__init__`` docstring says of its package's files that is
    not so: named files that do not exist, indexed modules that do not
    exist, modules the index leaves out."""
    modules = package_modules(directory)
    problems = [f"names {name}.py, which is not in the package"
                for name in re.findall(r"``(\w+)\.py``", docstring) if name not in modules]
    entries = index_entries(docstring)
    if entries is not None:
        problems += [f"indexes {name}, which is not in the package"
                     for name in sorted(entries - modules)]
        problems += [f"leaves out {name}" for name in sorted(modules - entries)]
    return problems


def packages():
    """{package directory relative to the repository: its docstring}."""
    found = {}
    for dirpath, dirnames, filenames in os.walk(SRC):
        dirnames[:] = [d for d in dirnames if d != "__pycache__"]
        if "__init__.py" in filenames:
            with open(os.path.join(dirpath, "__init__.py"), encoding="utf-8") as f:
                doc = ast.get_docstring(ast.parse(f.read())) or ""
            found[os.path.relpath(dirpath, REPO_ROOT)] = doc
    return found


class DocSections(unittest.TestCase):
    def test_planted_dead_citations_are_found(self):
        """A missing heading, a short form of a heading and a missing file
        are each reported; a heading that exists, wrapped over comment
        lines, is not."""
        texts = {
            "planted.py": (
                '# see docs/testing.md, "The project\'s tests" and\n'
                '# docs/relay.md "No such heading at all"\n'
                '"""as docs/testing.md "The quick" says; docs/gone.md, "Any"."""\n'
                '# docs/testing.md, "The\n#  quick loop: `./dev unit`"\n'),
        }
        self.assertEqual(dead_doc_citations(texts), [
            ("planted.py", "relay.md", "No such heading at all"),
            ("planted.py", "testing.md", "The quick"),
            ("planted.py", "gone.md", "Any"),
        ])

    def test_every_doc_citation_resolves(self):
        """Every ``docs/x.md, "Heading"`` in src, tests, misc, bench, docs
        and the README names a heading of that file."""
        self.assertEqual(dead_doc_citations(sources()), [])


class ProtocolSections(unittest.TestCase):
    def setUp(self):
        self.sections = protocol_sections()

    def test_the_names_are_read(self):
        """docs/protocols.md's table and section lists are read."""
        for name in ("Client API", "Dilation protocol", "Transit protocol",
                     "Mailbox server protocol", "Dilated File Transfer"):
            self.assertIn(name, self.sections)
        self.assertIn("Code Management", self.sections["Client API"])

    def test_planted_dead_citations_are_found(self):
        """A section not listed for its document is reported, also as the
        second of two; listed sections, wrapped or not, are not."""
        texts = {"planted.py": (
            '# Client API, "Code Management"; Dilation protocol, "L2 protocol",\n'
            '# "Reconnection Eventually"\n'
            '"""(Mailbox server\n    protocol, "Nameplates"; Client API, "Codes")"""\n')}
        self.assertEqual(dead_protocol_citations(texts, self.sections), [
            ("planted.py", "Dilation protocol", "Reconnection Eventually"),
            ("planted.py", "Client API", "Codes"),
        ])

    def test_every_protocol_citation_resolves(self):
        """Every ``Name, "Section"`` citation in src, tests, misc, bench,
        docs and the README uses a section docs/protocols.md lists."""
        self.assertEqual(dead_protocol_citations(sources(), self.sections), [])


class ModuleIndexes(unittest.TestCase):
    def test_planted_stale_indexes_are_found(self):
        """A file that moved away, an indexed module that is gone and a
        module the index leaves out are each reported."""
        directory = os.path.join(SRC, "wormhole", "_landing")
        doc = ("The rules.\n\n- ``_names``: names;\n- ``_gone``: gone;\n"
               "- ``_target``, ``_room``, ``_partial``, ``_folder``, ``_nofollow``\n"
               "``_offer.py`` holds the offers.")
        self.assertEqual(index_problems(directory, doc), [
            "names _offer.py, which is not in the package",
            "indexes _gone, which is not in the package",
            "leaves out _errors", "leaves out _folder", "leaves out _nofollow",
            "leaves out _partial", "leaves out _room", "leaves out _target",
        ])

    def test_every_index_matches_its_package(self):
        """Each package's ``__init__`` docstring names only its files, and
        an index names all of its modules."""
        problems = {}
        for package, doc in sorted(packages().items()):
            found = index_problems(os.path.join(REPO_ROOT, package), doc)
            if found:
                problems[package] = found
        self.assertEqual(problems, {})
