"""metadata.generateName as kube-apiserver handles it.

The server, not the client, picks the name: the prefix (cut to 58 characters, so the name stays within the
63 of a DNS label) plus 5 random characters from the alphabet that avoids vowels and look-alikes
(k8s.io/apiserver/pkg/storage/names.SimpleNameGenerator, utilrand.String).

27^5 is about 14.3 million names per prefix, so a DaemonSet over 5000 nodes draws a name it already used
about once in two rollouts (birthday bound). Since RetryGenerateName (GA in 1.32) the registry store tries
up to 8 names before it gives up; only then does the client see 409 AlreadyExists with the message
"..., the server was not able to generate a unique name for the object" and details.retryAfterSeconds 1
(rest.CheckGeneratedNameError -> errors.NewGenerateNameConflict).
"""
from __future__ import annotations

import random
from collections.abc import Callable

ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
RANDOM_LENGTH = 5
MAX_GENERATED_NAME_LENGTH = 63 - RANDOM_LENGTH
# registry.Store: maxNameGenerationCreateAttempts
MAX_ATTEMPTS = 8

_rng = random.Random()


def simple_name(prefix: str) -> str:
    """SimpleNameGenerator.GenerateName."""
    return prefix[:MAX_GENERATED_NAME_LENGTH] + "".join(_rng.choice(ALPHABET) for _ in range(RANDOM_LENGTH))


def pick_free(prefix: str, taken: Callable[[str], bool], generate: Callable[[str], str] = simple_name,
              attempts: int = MAX_ATTEMPTS) -> str | None:
    """A generated name no object holds yet, or None after `attempts` draws (the caller answers 409)."""
    for _ in range(attempts):
        name = generate(prefix)
        if not taken(name):
            return name
    return None
