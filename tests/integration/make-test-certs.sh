#!/bin/sh
# make-test-certs.sh DIR: throwaway certificates for the security tests
# (SecurityTest.cpp, MetricsTest.cpp), made at run time so that no private key
# is in the repo:
#   ca.pem/ca.key             a CA
#   server.pem/server.key     signed by it, for 127.0.0.1 and localhost
#   client.pem/client.key     signed by it, a client certificate, CN=builder-1
#   other-ca.pem              an unrelated CA (verifies nothing here)
#   other-client.pem/.key     a client certificate signed by the unrelated CA
set -eu
d="$1"
mkdir -p "$d"
cd "$d"
key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }
ca() { # name cn
  key "$1.key"
  openssl req -x509 -new -key "$1.key" -sha256 -days 2 -subj "/CN=$2" -out "$1.pem"
}
leaf() { # name cn ca extfile
  key "$1.key"
  openssl req -new -key "$1.key" -subj "/CN=$2" -out "$1.csr"
  openssl x509 -req -in "$1.csr" -CA "$3.pem" -CAkey "$3.key" -CAcreateserial -sha256 -days 2 \
    -extfile "$4" -out "$1.pem" 2>/dev/null
  rm -f "$1.csr"
}
printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n' > server.ext
printf 'extendedKeyUsage=clientAuth\nbasicConstraints=CA:FALSE\n' > client.ext
ca ca "msld test CA"
ca other-ca "another CA"
leaf server localhost ca server.ext
leaf client builder-1 ca client.ext
leaf other-client builder-1 other-ca client.ext
rm -f server.ext client.ext ./*.srl
