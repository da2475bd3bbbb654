#!/bin/sh
# Start-up of the proxy image: render /etc/nginx/templates/*.template into /tmp/nginx/conf.d,
# replacing ${TINYCONTEXT_*} variables from the environment and ${NGINX_LOCAL_RESOLVERS} with
# the container's name server from /etc/resolv.conf (Docker's embedded DNS is 127.0.0.11,
# podman's aardvark-dns sits on each network's gateway: neither can be written into the
# template). Then copy the user file where nginx's unprivileged workers can read it, and run
# nginx.
set -eu
run=/tmp/nginx
mkdir -p "$run/conf.d"

# The first name server only: engines list their own DNS first, and podman adds the host's
# servers after it. nginx asks the servers it is given in turn, and an upstream server
# answers "no such name" for the compose services, so listing them all fails every few
# requests.
NGINX_LOCAL_RESOLVERS=$(awk '$1 == "nameserver" && $2 !~ /%/ {
    print ($2 ~ /:/ ? "[" $2 "]" : $2); exit }' /etc/resolv.conf)
if [ -z "$NGINX_LOCAL_RESOLVERS" ]; then
    echo "tinycontext-proxy: no name server in /etc/resolv.conf" >&2
    exit 1
fi
export NGINX_LOCAL_RESOLVERS

# Only these variables are replaced: nginx's own $variables in the template stay as they are.
names=$(env | sed -n 's/^\(TINYCONTEXT_[A-Za-z0-9_]*\)=.*/${\1}/p' | tr '\n' ' ')
found=0
for template in /etc/nginx/templates/*.template; do
    [ -f "$template" ] || continue
    name=$(basename "$template" .template)
    envsubst "$names \${NGINX_LOCAL_RESOLVERS}" < "$template" > "$run/conf.d/$name"
    found=1
done
if [ "$found" = 0 ]; then
    echo "tinycontext-proxy: no /etc/nginx/templates/*.template to serve" >&2
    exit 1
fi

for file in /etc/nginx/htpasswd /etc/nginx/certs/fullchain.pem /etc/nginx/certs/privkey.pem; do
    if [ ! -r "$file" ]; then
        echo "tinycontext-proxy: cannot read $file (mount it, readable by root)" >&2
        exit 1
    fi
done
# The workers check passwords as www-data; the mounted file may be root's own (0600).
install -m 0640 -o root -g www-data /etc/nginx/htpasswd "$run/htpasswd"

exec nginx -c /etc/nginx/tinycontext-nginx.conf -g 'daemon off;'
