"""Credentials from the aliyun CLI's ~/.aliyun/config.json, after options and the ALIBABA_CLOUD_* variables, as
the Alibaba Cloud default credential chain orders them."""
from __future__ import annotations

import json

import pytest

from ansible_collections.storageperf.k8s.plugins.module_utils.ack import credentials as A

PROFILES = {
    "current": "main",
    "profiles": [
        {"name": "main", "mode": "AK", "access_key_id": "LTAImain0001", "access_key_secret": "mainsecret"},
        {"name": "sts", "mode": "StsToken", "access_key_id": "STS.abcd1234", "access_key_secret": "stssecret",
         "sts_token": "tok"},
        {"name": "role", "mode": "RamRoleArn", "access_key_id": "LTAIrole0001", "access_key_secret": "rolesecret",
         "ram_role_arn": "acs:ram::1:role/x"},
    ],
}


@pytest.fixture
def home(tmp_path):
    (tmp_path / ".aliyun").mkdir()
    (tmp_path / ".aliyun" / "config.json").write_text(json.dumps(PROFILES))
    return str(tmp_path)


def test_the_current_profile_when_nothing_else_is_set(home):
    assert A.credentials_from({}, {"HOME": home}) == ("LTAImain0001", "mainsecret", None)


def test_alibaba_cloud_profile_names_one_and_sts_profiles_carry_their_token(home):
    assert A.credentials_from({}, {"HOME": home, "ALIBABA_CLOUD_PROFILE": "sts"}) == ("STS.abcd1234", "stssecret", "tok")


def test_options_and_variables_come_before_the_profile(home):
    env = {"HOME": home, "ALIBABA_CLOUD_ACCESS_KEY_ID": "LTAIenv", "ALIBABA_CLOUD_ACCESS_KEY_SECRET": "envsecret"}
    assert A.credentials_from({}, env) == ("LTAIenv", "envsecret", None)
    assert A.credentials_from({"access_key_id": "LTAIopt", "access_key_secret": "o"}, {"HOME": home})[0] == "LTAIopt"


def test_half_given_credentials_are_not_completed_from_a_profile(home):
    with pytest.raises(A.AliyunError) as e:
        A.credentials_from({}, {"HOME": home, "ALIBABA_CLOUD_ACCESS_KEY_ID": "LTAIenv"})
    assert "ALIBABA_CLOUD_ACCESS_KEY_SECRET" in e.value.msg


def test_the_profile_file_can_be_switched_off(home):
    with pytest.raises(A.AliyunError) as e:
        A.credentials_from({}, {"HOME": home, "ALIBABA_CLOUD_CLI_PROFILE_DISABLED": "true"})
    assert e.value.code == "MissingCredentials" and "ALIBABA_CLOUD_PROFILE" in e.value.msg


@pytest.mark.parametrize("profile,message", [
    ("nope", "ALIBABA_CLOUD_PROFILE=nope names no profile in"),
    ("role", "uses mode RamRoleArn, which this collection cannot use"),
])
def test_unusable_profiles_say_why_without_the_secret(home, profile, message):
    with pytest.raises(A.AliyunError) as e:
        A.credentials_from({}, {"HOME": home, "ALIBABA_CLOUD_PROFILE": profile})
    assert message in e.value.msg and "rolesecret" not in e.value.msg


def test_a_broken_file_is_named(tmp_path):
    (tmp_path / ".aliyun").mkdir()
    (tmp_path / ".aliyun" / "config.json").write_text("{not json")
    with pytest.raises(A.AliyunError) as e:
        A.credentials_from({}, {"HOME": str(tmp_path)})
    assert str(tmp_path / ".aliyun" / "config.json") in e.value.msg
