"""Another COSE implementation for tern-contract's tests: pycose seals a
request (JSON on stdin becomes the CBOR payload; the tagged COSE message
goes to stdout) or opens an answer (COSE on stdin; the payload as JSON on
stdout). Keys come from the environment, base64: K1 (AES-256-GCM), M1
(HMAC 256/256), C1 (the client's Ed25519 seed), S1 (the server's Ed25519
public key).

    python pycose_peer.py seal encrypt0|mac0|sign1 < request.json > request.cose
    python pycose_peer.py open encrypt0|mac0|sign1 < answer.cose > answer.json
"""

import base64
import json
import os
import sys

import cbor2
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from pycose.algorithms import A256GCM, EdDSA, HMAC256
from pycose.headers import IV, KID, Algorithm
from pycose.keys import OKPKey, SymmetricKey
from pycose.keys.curves import Ed25519
from pycose.messages import CoseMessage, Enc0Message, Mac0Message, Sign1Message


def key(name):
    return base64.b64decode(os.environ[name])


def client_signing_key():
    seed = key("C1")
    public = Ed25519PrivateKey.from_private_bytes(seed).public_key().public_bytes_raw()
    return OKPKey(crv=Ed25519, d=seed, x=public)


def main():
    mode, kind = sys.argv[1], sys.argv[2]
    if mode == "seal":
        payload = cbor2.dumps(json.load(sys.stdin))
        if kind == "encrypt0":
            msg = Enc0Message(phdr={Algorithm: A256GCM, KID: b"k1"}, uhdr={IV: os.urandom(12)}, payload=payload)
            msg.key = SymmetricKey(k=key("K1"))
        elif kind == "mac0":
            msg = Mac0Message(phdr={Algorithm: HMAC256, KID: b"m1"}, payload=payload)
            msg.key = SymmetricKey(k=key("M1"))
        else:
            msg = Sign1Message(phdr={Algorithm: EdDSA, KID: b"c1"}, payload=payload)
            msg.key = client_signing_key()
        sys.stdout.buffer.write(msg.encode())
        return
    msg = CoseMessage.decode(sys.stdin.buffer.read())
    if kind == "encrypt0":
        assert isinstance(msg, Enc0Message), type(msg)
        msg.key = SymmetricKey(k=key("K1"))
        payload = msg.decrypt()
    elif kind == "mac0":
        assert isinstance(msg, Mac0Message), type(msg)
        msg.key = SymmetricKey(k=key("M1"))
        assert msg.verify_tag(), "the tag does not verify"
        payload = msg.payload
    else:
        assert isinstance(msg, Sign1Message), type(msg)
        assert msg.phdr[KID] == b"s1", msg.phdr
        msg.key = OKPKey(crv=Ed25519, x=key("S1"))
        assert msg.verify_signature(), "the signature does not verify"
        payload = msg.payload
    print(json.dumps(cbor2.loads(payload), sort_keys=True))


main()
