#!/usr/bin/env bash
# One-time (idempotent) set-up of a fresh clone: Java check, .venv with the core and every plugin, and the
# Apache Hudi Spark bundle (used by the interop tests and benchmarks only) cached under .cache/jars, with Hadoop's
# S3A connector for Apache Hudi to read tables on the tests' S3 server (hadoop-aws matches pyspark's Hadoop 3.3.4),
# and the object-store emulators the tests start on loopback: fake-gcs-server (GCS; a Go module built into
# .cache/bin) and Azurite (Azure Blob; an npm package under .cache/node).
#
# It prints one line per step; what the tools it runs say goes to a log that is shown only when a step fails.
set -euo pipefail
cd "$(dirname "$0")/.."

log=$(mktemp "${TMPDIR:-/tmp}/hudi-cluster-setup.XXXXXX")
trap 'rm -f "$log"' EXIT
# step "what it does" command...: runs the command with its output in the log; on failure, the log's end and exit
step() {
  local what=$1
  shift
  if ! NO_COLOR=1 TERM=dumb "$@" >"$log" 2>&1; then
    echo "set-up: ${what}: failed; its output ends with:" >&2
    tail -n 40 "$log" >&2
    exit 1
  fi
  echo "set-up: ${what}"
}

HUDI_VERSION=1.1.1
BUNDLE_ARTIFACT="org.apache.hudi:hudi-spark3.5-bundle_2.12:${HUDI_VERSION}"
BUNDLE=".cache/jars/hudi-spark3.5-bundle_2.12-${HUDI_VERSION}.jar"
S3A_ARTIFACTS=("org.apache.hadoop:hadoop-aws:3.3.4" "com.amazonaws:aws-java-sdk-bundle:1.12.262")
PYTHON="${PYTHON:-python3}"
FAKE_GCS_MODULE=github.com/fsouza/fake-gcs-server
FAKE_GCS_VERSION=v1.56.1
AZURITE_VERSION=3.35.0  # the newest whose engines accept Node 20 (3.36 wants Node 21+, 3.37 Node 22+)

java_major=$(java -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -n1)
if [ -z "${java_major}" ] || [ "${java_major}" -lt 17 ]; then
  echo "hudi-cluster needs Java 17 or newer for Spark 3.5 (found: ${java_major:-none}); install a JDK 17 and retry." >&2
  exit 2
fi

if [ ! -x .venv/bin/python ]; then
  step "created .venv" "$PYTHON" -m venv .venv
fi
stamp=.venv/.hudi-cluster-installed
sources=$(ls pyproject.toml plugins/*/pyproject.toml contrib/*/pyproject.toml 2>/dev/null | grep -v contrib/template || true)
if [ ! -f "$stamp" ] || [ -n "$(find $sources constraints.txt -newer "$stamp" 2>/dev/null)" ]; then
  step "pip upgraded" .venv/bin/python -m pip install -q --upgrade pip
  args=(-e ".[test,bench,cluster,report]")
  for project in $sources; do
    dir=$(dirname "$project")
    [ "$dir" = "." ] || args+=(-e "$dir")
  done
  step "installed hudi-cluster and its plugins into .venv" \
    .venv/bin/python -m pip install -q --progress-bar off -c constraints.txt "${args[@]}"
  touch "$stamp"
else
  echo "set-up: .venv up to date"
fi

jars_fetched=0
if [ ! -s "$BUNDLE" ]; then
  mkdir -p .cache/jars
  step "fetched ${BUNDLE_ARTIFACT}" mvn -q -B dependency:copy -Dartifact="$BUNDLE_ARTIFACT" -DoutputDirectory=.cache/jars
  jars_fetched=1
fi
for artifact in "${S3A_ARTIFACTS[@]}"; do
  IFS=: read -r _ name version <<<"$artifact"
  if [ ! -s ".cache/jars/${name}-${version}.jar" ]; then
    mkdir -p .cache/jars
    step "fetched ${artifact}" mvn -q -B dependency:copy -Dartifact="$artifact" -DoutputDirectory=.cache/jars
    jars_fetched=1
  fi
done
[ "$jars_fetched" = 1 ] || echo "set-up: Apache Hudi ${HUDI_VERSION} bundle and S3A jars cached"

# The class-data-sharing archive of Spark's classes a local run's driver JVM starts from (hudi_cluster_core/run/
# jvm_archive.py): made once per pyspark version by a small clustering run (a minute or two); then a quick check
# (optional: without it a run starts as before, so a failure here is said and the set-up goes on)
if NO_COLOR=1 TERM=dumb .venv/bin/python scripts/build-jvm-archive >"$log" 2>&1; then
  echo "set-up: JVM class archive of Spark ready (made once: scripts/build-jvm-archive)"
else
  echo "set-up: JVM class archive of Spark not made (runs start without it); its output ends with:" >&2
  tail -n 20 "$log" >&2
fi

# Emulators: each is (re)installed only when the installed version is not the pinned one, read from the binary's
# build info (go version -m) and from the package's package.json, so a second run costs two quick checks.
gcs_bin=.cache/bin/fake-gcs-server
if [ "$(go version -m "$gcs_bin" 2>/dev/null | awk '$1 == "mod" {print $3}')" != "$FAKE_GCS_VERSION" ]; then
  if ! command -v go >/dev/null; then
    echo "hudi-cluster's tests need Go to build fake-gcs-server (the GCS emulator); install Go and retry." >&2
    exit 2
  fi
  mkdir -p .cache/bin
  step "built fake-gcs-server ${FAKE_GCS_VERSION}" env GOBIN="$PWD/.cache/bin" go install "${FAKE_GCS_MODULE}@${FAKE_GCS_VERSION}"
else
  echo "set-up: fake-gcs-server ${FAKE_GCS_VERSION} installed"
fi
azurite_package=.cache/node/node_modules/azurite/package.json
if [ "$(node -p "require('./${azurite_package}').version" 2>/dev/null)" != "$AZURITE_VERSION" ]; then
  if ! command -v npm >/dev/null; then
    echo "hudi-cluster's tests need Node.js and npm to install Azurite (the Azure Blob emulator); install them and retry." >&2
    exit 2
  fi
  mkdir -p .cache/node
  # --ignore-scripts: Azurite runs without its dependencies' install scripts, and so nothing else runs here
  step "installed Azurite ${AZURITE_VERSION}" npm install --prefix .cache/node --save-exact --no-audit --no-fund \
    --ignore-scripts --loglevel=error --color=false "azurite@${AZURITE_VERSION}"
else
  echo "set-up: Azurite ${AZURITE_VERSION} installed"
fi
echo "set-up done (Java ${java_major})"
