"""Where accepted offers are written, under the receiving rules that
classic receive follows too (``wormhole._landing``): every name is checked
(the offered name and every path of a directory offer, before anything is
made), the target is a plain name inside the chosen folder, never an
existing one, there must be room for the offered bytes, and nothing
appears under a final name before its hash is verified.

- a file offer: bytes go to a hidden temporary name beside the target
  (``_landing.PartialFile``, hashed with BLAKE2b instead of SHA-256) and
  are linked to the final name once the FileAcknowledges matched;
- a directory offer: every file is written (the same way) inside a hidden
  temporary folder beside the target, which is renamed to the target once
  the last file matched; on any failure the folder is removed.

With the "resume" feature a file goes to a fixed hidden name and a
folder to a fixed hidden folder, each with a state file, so that a later
session can continue (docs/transfer-v2.md "Resume"); what an earlier
session left is checked before it is used (it may be stale or tampered
with) and discarded, with the reason in ``discarded``, when it does not
match. With the "empty-folders" feature a folder's empty folders are made
before it is renamed into place.

The paths inside a directory offer are checked (``_landing.check_path``)
before the temporary folder is made, so ``os.path.join`` stays inside it.

``sink_for`` picks the sink: ``_plain_sinks`` (FileSink, DirectorySink),
``_resumable`` (ResumableFileSink, ResumableDirectorySink); their
writers are in ``_writers``.
"""
from .. import _landing
from . import _messages as M
from ._plain_sinks import DirectorySink, FileSink
from ._resumable import ResumableDirectorySink, ResumableFileSink

Refused = _landing.Refused


def sink_for(offer, directory, free_space=_landing.default_free_space, name=None,
             resumable=False, modes=False):
    """The sink for an accepted offer (an ISink; an IResumableSink with
    ``resumable``), or Refused (the reason goes to the peer): BadName for
    a name or a path of the offer that the receiving rules refuse, as
    classic receive refuses it. ``name`` replaces the offered name
    (``wormhole receive -o``); ``resumable`` when both peers declared the
    "resume" feature; ``modes`` when both declared the "file-modes" feature:
    a file gets the mode its FileOffer carries (the receiving rules'
    ``_landing.landed_mode``), else what ``open()`` gives."""
    if isinstance(offer, M.DirectoryOffer):
        kind = ResumableDirectorySink if resumable and offer.files else DirectorySink
    else:
        kind = ResumableFileSink if resumable else FileSink
    sink = kind(offer, directory, free_space, name)
    sink.modes = modes
    return sink
