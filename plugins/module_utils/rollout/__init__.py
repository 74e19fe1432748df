"""The guarded rollout (playbooks/rollout.yml): waves, gate, records."""
