#!/usr/bin/env bash
# Builds every image of the stack on a machine with a Docker engine and no image registry:
#
#   1. the base `isp-billing-base:trixie` from Debian's packages (debootstrap --variant=minbase
#      trixie, imported with `docker import`), skipped when an image with the same inputs exists;
#   2. deploy/Dockerfile's targets FROM that base (BASE build argument): isp-billing (service),
#      isp-billing-pdf, isp-billing-radius, isp-billing-postgres, isp-billing-nats, each tagged
#      `local` and the package version. Docker's layer cache skips every step whose inputs did
#      not change (npm install reruns only when package.json or the lock changes).
#      isp-billing-postgres-ha (target postgres-ha: + Patroni and etcd) is built only when named in
#      IMAGES (npm run test:failover does).
#
# With a registry, skip step 1: BASE=debian:trixie-slim deploy/images.sh (or build the targets
# with plain `docker build`). Prints the seconds of each step and the image sizes.
# Env: BASE (default: the debootstrap base), DEBIAN_MIRROR, IMAGES (targets to build, default all).
# `deploy/images.sh --base-only` stops after step 1 (npm run test:bare builds its bare image on it).
set -euo pipefail
cd "$(dirname "$0")/.."
export DOCKER_BUILDKIT=0 # the classic builder: no BuildKit frontend image to pull, works with docker.io 20.10
PATH="$PATH:/usr/sbin:/sbin"

mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
base_name="isp-billing-base:trixie"
version="$(node -p 'require("./package.json").version')"
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

command -v docker >/dev/null || { echo "docker is not installed (Debian: apt-get install docker.io)" >&2; exit 2; }
docker info >/dev/null 2>&1 || { echo "no Docker engine answers (start one: dockerd --bridge=none --iptables=false &)" >&2; exit 2; }

# ------------------------------------------------------------------ 1. the base
base="${BASE:-}"
if [[ -z "$base" ]]; then
  base="$base_name"
  inputs="debootstrap minbase trixie $mirror v1"
  want="$(printf '%s' "$inputs" | sha256sum | cut -c1-16)"
  have="$(docker image inspect -f '{{ index .Config.Labels "isp-billing.base-inputs" }}' "$base" 2>/dev/null || true)"
  if [[ "$have" == "$want" ]]; then
    echo "[images] base $base: up to date (inputs $want)"
  else
    command -v debootstrap >/dev/null || { echo "debootstrap is not installed (apt-get install debootstrap), or set BASE to a public image" >&2; exit 2; }
    t=$(now)
    root="$(mktemp -d /var/tmp/isp-billing-rootfs.XXXXXX)"
    trap 'rm -rf "$root"' EXIT
    debootstrap --variant=minbase trixie "$root" "$mirror" >/dev/null
    rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/* "$root"/tmp/*
    # Containers start no services and need no documentation.
    printf 'path-exclude /usr/share/doc/*\npath-exclude /usr/share/man/*\npath-exclude /usr/share/locale/*\n' \
      > "$root/etc/dpkg/dpkg.cfg.d/01-nodoc"
    printf 'APT::Install-Recommends "false";\n' > "$root/etc/apt/apt.conf.d/01-norecommends"
    tar -C "$root" -c . | docker import --change "LABEL isp-billing.base-inputs=$want" --change 'CMD ["/bin/bash"]' - "$base" >/dev/null
    rm -rf "$root"
    trap - EXIT
    echo "[images] base $base: debootstrap + import in $(secs "$t") s"
  fi
fi

[[ "${1:-}" == "--base-only" ]] && exit 0

# ------------------------------------------------------------------ 2. the targets
declare -A NAMES=([service]=isp-billing [pdf-renderer]=isp-billing-pdf [freeradius]=isp-billing-radius
  [postgres]=isp-billing-postgres [postgres-ha]=isp-billing-postgres-ha [nats]=isp-billing-nats)
targets=(${IMAGES:-service pdf-renderer freeradius postgres nats})
context() {
  # The working tree without what the build makes or must not see (the same list as Dockerfile.dockerignore).
  # The host's extra CAs (a TLS-intercepting proxy's) go in as deploy/ca-certificates/ (README there).
  local cas=()
  compgen -G '/usr/local/share/ca-certificates/*.crt' >/dev/null &&
    cas=(-C /usr/local/share --transform 's,^ca-certificates/,deploy/ca-certificates/,' ca-certificates/)
  tar -c --exclude=./node_modules --exclude=./dist --exclude=./data --exclude=./coverage --exclude=./.git \
    --exclude='*.log' . "${cas[@]}"
}
# One snapshot of the tree for every target: the same code in every image, and the build stage
# cached after the first target even while the tree is being edited.
snapshot="$(mktemp /var/tmp/isp-billing-context.XXXXXX.tar)"
trap 'rm -f "$snapshot"' EXIT
context >"$snapshot"
for target in "${targets[@]}"; do
  name="${NAMES[$target]:?unknown target $target}"
  t=$(now)
  log="$(mktemp)"
  if ! docker build -q --network host -f deploy/Dockerfile --build-arg "BASE=$base" --target "$target" \
    -t "$name:local" -t "$name:$version" - <"$snapshot" >"$log" 2>&1; then
    cat "$log" >&2
    echo "[images] FAILED: $target" >&2
    exit 1
  fi
  rm -f "$log"
  echo "[images] $name ($target): $(secs "$t") s"
done

docker image ls --format '{{.Repository}}:{{.Tag}} {{.Size}}' | grep -E "^(isp-billing[a-z-]*):(local|trixie) " |
  sort | sed 's/^/[images] size /'
