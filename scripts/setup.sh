#!/usr/bin/env bash
# One-time (idempotent) set-up of a fresh clone: Java check, .venv with the core and every plugin, and the
# Apache Hudi Spark bundle (used by the interop tests and benchmarks only) cached under .cache/jars, with Hadoop's
# S3A connector for Apache Hudi to read tables on the tests' S3 server (hadoop-aws matches pyspark's Hadoop 3.3.4),
# and the object-store emulators the tests start on loopback: fake-gcs-server (GCS; a Go module built into
# .cache/bin) and Azurite (Azure Blob; an npm package under .cache/node).
set -euo pipefail
cd "$(dirname "$0")/.."

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
  "$PYTHON" -m venv .venv
fi
stamp=.venv/.hudi-cluster-installed
sources=$(ls pyproject.toml plugins/*/pyproject.toml contrib/*/pyproject.toml 2>/dev/null | grep -v contrib/template || true)
if [ ! -f "$stamp" ] || [ -n "$(find $sources constraints.txt -newer "$stamp" 2>/dev/null)" ]; then
  .venv/bin/python -m pip install -q --upgrade pip
  args=(-e ".[test,bench,cluster,report]")
  for project in $sources; do
    dir=$(dirname "$project")
    [ "$dir" = "." ] || args+=(-e "$dir")
  done
  .venv/bin/python -m pip install -q -c constraints.txt "${args[@]}"
  touch "$stamp"
fi

if [ ! -s "$BUNDLE" ]; then
  mkdir -p .cache/jars
  mvn -q -B dependency:copy -Dartifact="$BUNDLE_ARTIFACT" -DoutputDirectory=.cache/jars
fi
for artifact in "${S3A_ARTIFACTS[@]}"; do
  IFS=: read -r _ name version <<<"$artifact"
  if [ ! -s ".cache/jars/${name}-${version}.jar" ]; then
    mkdir -p .cache/jars
    mvn -q -B dependency:copy -Dartifact="$artifact" -DoutputDirectory=.cache/jars
  fi
done

# Emulators: each is (re)installed only when the installed version is not the pinned one, read from the binary's
# build info (go version -m) and from the package's package.json, so a second run costs two quick checks.
gcs_bin=.cache/bin/fake-gcs-server
if [ "$(go version -m "$gcs_bin" 2>/dev/null | awk '$1 == "mod" {print $3}')" != "$FAKE_GCS_VERSION" ]; then
  if ! command -v go >/dev/null; then
    echo "hudi-cluster's tests need Go to build fake-gcs-server (the GCS emulator); install Go and retry." >&2
    exit 2
  fi
  mkdir -p .cache/bin
  GOBIN="$PWD/.cache/bin" go install "${FAKE_GCS_MODULE}@${FAKE_GCS_VERSION}"
fi
azurite_package=.cache/node/node_modules/azurite/package.json
if [ "$(node -p "require('./${azurite_package}').version" 2>/dev/null)" != "$AZURITE_VERSION" ]; then
  if ! command -v npm >/dev/null; then
    echo "hudi-cluster's tests need Node.js and npm to install Azurite (the Azure Blob emulator); install them and retry." >&2
    exit 2
  fi
  mkdir -p .cache/node
  # --ignore-scripts: Azurite runs without its dependencies' install scripts, and so nothing else runs here
  npm install --prefix .cache/node --save-exact --no-audit --no-fund --ignore-scripts --loglevel=error \
    "azurite@${AZURITE_VERSION}"
fi
echo "set-up done: .venv ready, $BUNDLE cached, fake-gcs-server ${FAKE_GCS_VERSION}, Azurite ${AZURITE_VERSION}, Java ${java_major}"
