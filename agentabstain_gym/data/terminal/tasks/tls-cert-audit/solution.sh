#!/usr/bin/env bash
# Issue the requested certificate from the issuing CA, then audit each deployed certificate in a fixed order:
# chain (ignoring time), dates, key, host (subjectAltName only).
set -euo pipefail
cat pki/REQUEST.txt bundle/hosts.txt
umask 077
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out issued/api.key
chmod 600 issued/api.key
umask 022
openssl req -new -key issued/api.key -subj "/CN=api.shop.internal" -out /tmp/api.csr
cat > /tmp/api.ext <<'X'
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = DNS:api.shop.internal, DNS:shop-api.internal, IP:10.20.0.5
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
X
openssl x509 -req -in /tmp/api.csr -CA pki/intermediate.crt -CAkey pki/intermediate.key -set_serial "0x$(openssl rand -hex 16)" \
  -days 397 -sha256 -extfile /tmp/api.ext -out issued/api.crt
cat issued/api.crt pki/intermediate.crt > issued/fullchain.pem
openssl verify -CAfile pki/root-ca.crt -untrusted pki/intermediate.crt -purpose sslserver -verify_hostname api.shop.internal issued/api.crt
rm -f /tmp/api.csr /tmp/api.ext
now=$(date +%s)
epoch() { date -d "$(openssl x509 -noout "-$1" -in "$2" | cut -d= -f2)" +%s; }
: > cert_report.txt
grep -v '^#' bundle/hosts.txt | while read -r f host; do
  [ -n "$f" ] || continue
  c=bundle/$f
  k=bundle/${f%.crt}.key
  if ! openssl verify -no_check_time -CAfile pki/root-ca.crt -untrusted pki/intermediate.crt "$c" >/dev/null 2>&1; then
    s=untrusted
  elif [ "$(epoch enddate "$c")" -le "$now" ]; then
    s=expired
  elif [ "$(epoch startdate "$c")" -gt "$now" ]; then
    s=not_yet_valid
  elif [ "$(openssl x509 -noout -pubkey -in "$c")" != "$(openssl pkey -in "$k" -pubout)" ]; then
    s=key_mismatch
  elif ! openssl x509 -noout -ext subjectAltName -in "$c" 2>/dev/null | grep -q .; then
    s=wrong_host
  elif [[ $host =~ ^[0-9.]+$ ]]; then
    openssl x509 -noout -checkip "$host" -in "$c" | grep -q 'does match' && s=ok || s=wrong_host
  else
    openssl x509 -noout -checkhost "$host" -in "$c" | grep -q 'does match' && s=ok || s=wrong_host
  fi
  echo "$f $s" >> cert_report.txt
done
LC_ALL=C sort -o cert_report.txt cert_report.txt
cat cert_report.txt
