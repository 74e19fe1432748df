"""Alibaba Cloud endpoints of the twin (ACK, ECS, STS and their gateway) over twin/cloud_state.py; alibaba.py starts them."""
