"""What runs on this machine for the twin's pods: the image catalogue, containers as host processes, and the
host directories behind PersistentVolumes."""
