#!/usr/bin/env bash
# Lints template.yaml. Installs nothing: cfn-lint must be on PATH (it comes
# with `pip install aws-sam-cli`); `sam validate --lint` runs only when sam is.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v cfn-lint >/dev/null 2>&1; then
    echo "check-template: cfn-lint not found on PATH" >&2
    exit 1
fi
# Non-zero on any error or warning.
cfn-lint template.yaml
echo "check-template: cfn-lint template.yaml: ok"

if command -v sam >/dev/null 2>&1; then
    # --lint runs offline; a region keeps SAM CLI from asking for one.
    SAM_CLI_TELEMETRY=0 AWS_DEFAULT_REGION="${AWS_DEFAULT_REGION:-us-east-1}" \
        sam validate --lint --template-file template.yaml
else
    echo "check-template: sam not on PATH, skipping sam validate --lint"
fi
