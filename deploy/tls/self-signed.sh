#!/bin/sh
# A self-signed certificate for trying TLS: writes tls.crt and tls.key (0600) into INFERWATCH_TLS_DIR (default:
# this directory), valid 365 days for localhost, 127.0.0.1 and every host name or IP address given.
#   deploy/tls/self-signed.sh                       # localhost only
#   deploy/tls/self-signed.sh collector.example.com 10.0.0.5
# Clients trust it by its file: OTEL_EXPORTER_OTLP_CERTIFICATE=deploy/tls/tls.crt, or INFERWATCH_CA_FILE for the SDK.
# In production use a certificate from your CA instead (same two file names).
set -eu
dir=${INFERWATCH_TLS_DIR:-$(dirname "$0")}
san="DNS:localhost,IP:127.0.0.1"
for name in "$@"; do
    case $name in
        *[!0-9.]*) san="$san,DNS:$name" ;;
        *) san="$san,IP:$name" ;;
    esac
done
umask 077
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -sha256 -days 365 -nodes \
    -keyout "$dir/tls.key" -out "$dir/tls.crt" -subj "/CN=${1:-localhost}" -addext "subjectAltName=$san"
chmod 644 "$dir/tls.crt"
echo "wrote $dir/tls.crt and $dir/tls.key for $san"
