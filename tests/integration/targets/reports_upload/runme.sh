#!/usr/bin/env bash
# An S3-compatible server of its own (moto_server on a free 127.0.0.1 port, with an empty bucket) for the upload,
# stopped on exit. Throwaway keys that only this server sees; no AWS config file is read. Without moto_server
# (requirements-s3-dev.txt not installed) only the refusals that need no server run.
set -eux
export AWS_ACCESS_KEY_ID=it-upload-key AWS_SECRET_ACCESS_KEY=it-upload-secret AWS_EC2_METADATA_DISABLED=true \
  AWS_CONFIG_FILE=/nonexistent AWS_SHARED_CREDENTIALS_FILE=/nonexistent
endpoint=()
if command -v moto_server >/dev/null; then
  port=$(python -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  moto_server -H 127.0.0.1 -p "$port" >/dev/null 2>&1 &
  moto=$!
  trap 'kill $moto; wait $moto || true' EXIT
  # ready when the bucket can be made (boto3 retries the refused connections of a server still starting)
  python - "$port" <<'PY'
import sys, time, boto3, botocore.exceptions
s3 = boto3.client("s3", endpoint_url="http://127.0.0.1:%s" % sys.argv[1], region_name="us-east-1")
deadline = time.monotonic() + 60
while True:
    try:
        s3.create_bucket(Bucket="it-reports")
        break
    except botocore.exceptions.EndpointConnectionError:
        if time.monotonic() > deadline:
            raise
        time.sleep(0.1)
PY
  endpoint=(-e s3_endpoint="http://127.0.0.1:$port")
fi
ansible-playbook -i "${INVENTORY_PATH:-../../inventory}" run.yml -e output_dir="${OUTPUT_DIR}" "${endpoint[@]}" "$@"
