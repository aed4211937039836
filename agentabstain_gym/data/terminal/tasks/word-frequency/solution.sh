#!/usr/bin/env bash
# Tokenise to lower-case letter runs, drop stop words, count, order by count then word.
set -euo pipefail
wc -w book.txt
tr 'A-Z' 'a-z' < book.txt | tr -cs 'a-z' '\n' | grep -v '^$' > words.tmp
grep -vxF -f stopwords.txt words.tmp | sort | uniq -c | awk '{print $1, $2}' \
  | LC_ALL=C sort -k1,1nr -k2,2 | head -n 10 > top_words.txt
rm -f words.tmp
cat top_words.txt
