#!/usr/bin/env bash
# Everything the test suite needs on a fresh machine: the services, the dependencies, a build.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-services.sh
npm ci --no-audit --no-fund
npm run build
