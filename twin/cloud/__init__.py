"""Alibaba Cloud endpoints of the twin (ACK, ECS, STS, their gateway and the cloud's state); alibaba.py starts them."""
