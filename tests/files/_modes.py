"""Trees of files with given permission bits, and reading them back
(support for the file-mode tests of both protocols, tests/files and
tests/transfer_v2; never a test module itself)."""
import os
import stat

MODES = {"run.sh": 0o755, "doc.txt": 0o644, "sub/secret.key": 0o600,
         "sub/deeper/tool": 0o700}
# set-uid, set-gid and sticky at the sender: the permission bits arrive,
# never those (our sender does not write them: the reference's receiver
# would apply them; our receiver drops them from the reference's zipfile)
SPECIAL = {"setuid": 0o4755, "setgid": 0o2750, "all": 0o7777}


def make_moded_tree(root, modes=MODES):
    for rel, mode in modes.items():
        path = os.path.join(root, *rel.split("/"))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(rel.encode() * 100)
        os.chmod(path, mode)
    return root


def modes_of(root):
    """{relative path: permission bits} of every file under ``root``."""
    out = {}
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, root).replace(os.sep, "/")
            out[rel] = stat.S_IMODE(os.lstat(path).st_mode)
    return out
