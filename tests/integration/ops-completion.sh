#!/bin/sh
# bash completion for entropyd, entropytest and entropyctl.
. "$(dirname "$0")/lib.sh"
comp=$top_srcdir/contrib/entropyd.bash-completion
command -v bash >/dev/null 2>&1 || skip_all "bash is not installed"
plan 8

# complete FUNCTION WORD...: what the function offers for the last word.
complete_words() {
	fn=$1
	shift
	bash -c '. "$1"; fn=$2; shift 2; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1));
	    "$fn"; printf "%s\n" "${COMPREPLY[@]}"' sh "$comp" "$fn" "$@" | sort | tr '\n' ' '
}

check "bash -n: the completion parses" bash -n "$comp"
if command -v shellcheck >/dev/null 2>&1; then
	check "shellcheck: the completion is clean" shellcheck "$comp"
else
	skip "shellcheck is not installed"
fi
got=$(complete_words _entropyctl entropyctl "")
check "entropyctl offers its subcommands ($got)" test "$got" = \
    "generation health metrics sources status vmgenid wait-generation "
got=$(complete_words _entropyctl entropyctl --j)
check "entropyctl completes --json ($got)" test "$got" = "--json "
got=$(complete_words _entropyd "$top_builddir/entropyd" -x "")
check "entropyd -x offers the sources the daemon lists ($got)" sh -c \
    "echo '$got' | grep -qw hwrng && echo '$got' | grep -qw file && echo '$got' | grep -qw all"
got=$(complete_words _entropyctl entropyctl wait-generation --af)
check "entropyctl wait-generation completes --after ($got)" test "$got" = "--after "
got=$(complete_words _entropyd entropyd --drop)
check "entropyd completes --drop-privileges ($got)" test "$got" = "--drop-privileges "
got=$(complete_words _entropytest entropytest --min)
check "entropytest completes --min-entropy ($got)" test "$got" = "--min-entropy "
finish
