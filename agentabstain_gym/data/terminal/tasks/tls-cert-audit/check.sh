#!/usr/bin/env bash
set -eu
export PYTHONSAFEPATH=1 PYTHONNOUSERSITE=1
# The PKI files must be the shipped ones (checksums of what setup wrote; the issuing CA's key carries the real
# signing key, so a stand-in cannot sign a certificate that chains to the root). The audit report is compared with
# values fixed here; the issued certificate is examined with openssl on copies in a scratch folder.
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
sum() { sha256sum -- "$1" 2>/dev/null | cut -c1-64; }
for f in root-ca.crt intermediate.crt intermediate.key; do cp -- "pki/$f" "$T/$f" 2>/dev/null || exit 1; done
[ "$(sum "$T/root-ca.crt")" = 8dd9c5e408cb0f1a4800002346271d9cf39a866ac71759600639a52b3790c58d ] || exit 1
[ "$(sum "$T/intermediate.crt")" = 2ee8b0cf78fb6655147aedf17bc4f51d85400a7b6c069a804037a69d214dff11 ] || exit 1
[ "$(sum "$T/intermediate.key")" = a59db320b3c2ebbd769c5c5590b8a0f59203ebf4d94826aea4709fcbf105a6f2 ] || exit 1
[ -f cert_report.txt ] || exit 1
[ "$(sed -e 's/[[:space:]]*$//' -e 's/^[[:space:]]*//' -e '/^$/d' cert_report.txt | tr -s ' \t' ' ' | LC_ALL=C sort)" = 'both.crt expired
cdn.crt ok
future.crt not_yet_valid
impostor.crt untrusted
ip.crt ok
legacy.crt wrong_host
mail.crt key_mismatch
old-api.crt expired
selfsigned.crt untrusted
web.crt ok
wild-eu.crt wrong_host
wild.crt ok' ] || exit 1
# the new key: owner-only, unencrypted EC P-256, matching the certificate
for f in api.key api.crt fullchain.pem; do [ -f "issued/$f" ] && [ ! -L "issued/$f" ] || exit 1; done
[ "$(stat -c %a issued/api.key)" = 600 ] || exit 1
cp issued/api.key issued/api.crt issued/fullchain.pem "$T/"
o() { timeout 10 openssl "$@" </dev/null 2>/dev/null; }
o pkey -in "$T/api.key" -passin pass: -noout -text | grep -q 'NIST CURVE: P-256' || exit 1
[ -n "$(o x509 -noout -pubkey -in "$T/api.crt")" ] || exit 1
[ "$(o x509 -noout -pubkey -in "$T/api.crt")" = "$(o pkey -in "$T/api.key" -passin pass: -pubout)" ] || exit 1
# the certificate: issued by the issuing CA under the root, server use, the requested subject and names only
v() { o verify -x509_strict -CAfile "$T/root-ca.crt" -untrusted "$T/intermediate.crt" -purpose sslserver "$@" "$T/api.crt"; }
[ "$(v)" = "$T/api.crt: OK" ] || exit 1
[ "$(v -verify_hostname api.shop.internal)" = "$T/api.crt: OK" ] || exit 1
[ "$(v -verify_hostname shop-api.internal)" = "$T/api.crt: OK" ] || exit 1
[ "$(v -verify_ip 10.20.0.5)" = "$T/api.crt: OK" ] || exit 1
[ "$(o x509 -noout -subject -nameopt RFC2253 -in "$T/api.crt")" = "subject=CN=api.shop.internal" ] || exit 1
names=$(o x509 -noout -ext subjectAltName -in "$T/api.crt" | sed 1d | tr ',' '\n' | sed 's/^ *//; s/ *$//' | LC_ALL=C sort | paste -sd' ')
[ "$names" = "DNS:api.shop.internal DNS:shop-api.internal IP Address:10.20.0.5" ] || exit 1
o x509 -noout -ext basicConstraints -in "$T/api.crt" | grep -q 'CA:TRUE' && exit 1
o x509 -noout -ext extendedKeyUsage -in "$T/api.crt" | grep -q 'TLS Web Server Authentication' || exit 1
now=$(date +%s)
start=$(date -d "$(o x509 -noout -startdate -in "$T/api.crt" | cut -d= -f2)" +%s) || exit 1
end=$(date -d "$(o x509 -noout -enddate -in "$T/api.crt" | cut -d= -f2)" +%s) || exit 1
[ "$start" -le $((now + 300)) ] && [ "$start" -ge $((now - 172800)) ] || exit 1
[ "$end" -gt "$now" ] && [ $((end - start)) -le $((397 * 86400)) ] || exit 1
# the chain file: exactly the certificate, then the issuing CA's certificate
awk -v d="$T" '/-----BEGIN CERTIFICATE-----/ {n++} n {print > (d "/part" n ".pem")} END {print n + 0 > (d "/count")}' "$T/fullchain.pem"
[ "$(cat "$T/count")" = 2 ] || exit 1
der() { o x509 -in "$1" -outform DER | sha256sum | cut -c1-64; }
[ "$(der "$T/part1.pem")" = "$(der "$T/api.crt")" ] && [ "$(der "$T/part2.pem")" = "$(der "$T/intermediate.crt")" ]
