"""The shell scripts ``wormhole completion bash|zsh|fish`` prints: click's,
with the fixes the real shells showed (docs/cli.md, "Shell completion").
Each fix replaces a line of click's script; a click whose script no longer
has that line is an error here, not a script shipped without the fix."""

# bash splits the words it hands to a completion function at ':' and '='
# too (COMP_WORDBREAKS), so `--relay-url ws://host:4000/v1` reached click
# as five words: send it the line up to the cursor instead, split at
# blanks only
_BASH_WORDS = ('    response=$(env COMP_WORDS="${COMP_WORDS[*]}" COMP_CWORD=$COMP_CWORD',
               '    local line="${COMP_LINE:0:$COMP_POINT}"\n'
               '    local cword=$(wc -w <<< "$line")\n'
               '    [[ "$line" == *[[:space:]] ]] || cword=$((cword - 1))\n'
               '    response=$(env COMP_WORDS="$line" COMP_CWORD=$cword')

# a code completed up to its hyphen ("4-", "4-purple-") goes on being
# typed: no space after it (fish leaves none after a trailing '-' itself)
_BASH_NOSPACE = ("COMPREPLY+=($value)",
                 "COMPREPLY+=($value)\n"
                 "            [[ $value == *- ]] && compopt -o nospace")
# zsh: those go in with an empty suffix (-S ''), the others as before
_ZSH_NOSPACE = ("        compadd -U -V unsorted -a completions",
                "        local -a hyphened=(${(M)completions:#*-})\n"
                "        completions=(${completions:#*-})\n"
                # (an `if`: a compadd of nothing fails, and zsh beeps)
                "        if (( $#hyphened )); then compadd -U -S '' -V unsorted -a hyphened; fi\n"
                "        if (( $#completions )); then compadd -U -V unsorted -a completions; fi")

# fish: click's "type,value<TAB>help" split at every comma cut an option's
# help at its first comma ("refuse file transfers, only accept ...");
# split at the first one only
_FISH_SPLIT = ('(string split "," $completion)',
               '(string split --max 1 "," -- $completion)')

_FIXES = {"bash": (_BASH_WORDS, _BASH_NOSPACE), "zsh": (_ZSH_NOSPACE,), "fish": (_FISH_SPLIT,)}


def fixed_script(shell, source):
    """click's completion script ``source`` for ``shell``, fixed."""
    for old, new in _FIXES[shell]:
        if old not in source:
            raise RuntimeError(f"click's {shell} completion script changed: "
                               f"no {old.strip()!r} to fix")
        source = source.replace(old, new)
    return source
