#!/usr/bin/env bash
# Installs a rendered GPU-host kit (the directory this script is in) on the GPU host: run as root there.
# Puts the files in place, creates the hexflow user, and enables the three units; starts nothing.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [[ "$(id -u)" -ne 0 ]]; then
  echo "install: run as root (sudo $0)" >&2
  exit 2
fi

install -d -m 0755 /etc/hexflow /etc/cloudflared /usr/local/lib/hexflow
install -m 0644 "$here/etc/hexflow/gpu-host.env" /etc/hexflow/gpu-host.env
install -m 0644 "$here"/etc/cloudflared/hexflow-*.yml /etc/cloudflared/
install -m 0755 "$here/usr/local/lib/hexflow/vllm-launch.sh" "$here/usr/local/lib/hexflow/register.sh" /usr/local/lib/hexflow/
install -m 0644 "$here"/etc/systemd/system/hexflow-*.service /etc/systemd/system/

if ! id -u hexflow >/dev/null 2>&1; then
  useradd --system --home-dir /var/lib/hexflow --create-home --shell /usr/sbin/nologin hexflow
fi
install -d -o hexflow -g hexflow -m 0750 /var/lib/hexflow/huggingface

systemctl daemon-reload
systemctl enable hexflow-vllm.service hexflow-cloudflared.service hexflow-register.service
if [[ ! -s /etc/hexflow/registration-token ]]; then
  echo "install: now write the pool's registration token to /etc/hexflow/registration-token (chmod 0600)"
fi
echo "install: done; start with: systemctl start hexflow-register.service"
