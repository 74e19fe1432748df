"""The API server's streams: exec/attach (remotecommand), port-forward, the SPDY and WebSocket upgrades they
ride on, and the kubelet's container logs."""
