"""Signed agreements: what a shop's checkout can trust once a negotiation ends in a deal.

When a negotiation ends in a deal, ``Sessions`` (and so the HTTP, MCP and A2A faces)
returns an :class:`AgreementRecord`: the listing, the negotiation, the final terms, the
price in the listing's currency, when it was agreed, and an **Ed25519** signature by the
service's signing key over the record's canonical JSON (RFC 8785, JCS).

Why Ed25519 and not an HMAC: the record travels. The shop's checkout creates its cart from
it, and an agent payments flow may hand it on (a buyer's agent, a payment service). With a
public-key signature anyone holding the *public* key can check it and nobody but the
service can make one; with an HMAC every verifier would hold the secret that signs, so any
of them could forge a deal. Keys are small (32 bytes), signatures deterministic, and
verification is one call in every language's standard crypto library.

::

    record = state.agreement_record                    # a deal's record (None otherwise)
    verify_agreement(record, public_key)               # raises InvalidAgreement if tampered
"""

from __future__ import annotations

import base64
import hashlib
import os
from decimal import Decimal
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .domain.issues import NumericIssue, Offer
from .domain.scenario import Listing
from .errors import InvalidAgreement, UsageError

SIGNING_KEY_ENV = "NEGOTIATOR_SIGNING_KEY"
ALGORITHM: Literal["Ed25519"] = "Ed25519"
# ISO 4217 currencies without minor units; everything else is written with two decimals.
_ZERO_DECIMAL = {"JPY", "KRW", "VND", "CLP", "ISK", "UGX", "XAF", "XOF"}


class Money(BaseModel):
    """An amount in a currency, as a decimal string (no float rounding in what is signed)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    amount: str = Field(description="decimal string, e.g. '849.50' (no minor-unit scaling)")
    currency: str = Field(description="ISO 4217 code of the listing, e.g. USD")


class Signature(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    alg: Literal["Ed25519"] = ALGORITHM
    key_id: str = Field(description="which key signed: the first 16 hex digits of SHA-256 of the raw public key")
    value: str = Field(
        description="base64url (no padding) Ed25519 signature of the record's RFC 8785 canonical JSON without 'signature'"
    )


class AgreementRecord(BaseModel):
    """A deal, signed by the service: what a checkout creates its cart from."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    record_version: Literal[1] = 1
    listing_id: str = Field(description="the listing (catalogue entry or generated scenario) that was negotiated")
    session_id: str = Field(description="the negotiation's id")
    product: str = Field(description="the product's name, for the cart line")
    terms: Offer = Field(description="the agreed value of every issue")
    price: Money | None = Field(
        description="the agreed price issue's value in the listing's currency (None if the listing has no price issue)"
    )
    price_issue: str | None = Field(None, description="which issue the price is, e.g. unit_price")
    price_unit: str = Field(
        "", description="what the price is per, from the issue's unit: '' (the whole deal), 'per unit', ..."
    )
    agreed_at: str = Field(description="ISO 8601 UTC time the deal was made")
    signature: Signature | None = Field(None, description="absent only on a record being built or checked")

    def payload(self) -> bytes:
        """The signed bytes: RFC 8785 canonical JSON of the record without its signature."""
        import rfc8785

        return rfc8785.dumps(self.model_dump(mode="json", exclude={"signature"}))


class VerifyKey:
    """An Ed25519 public key: what checks agreement records."""

    def __init__(self, raw: bytes):
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

        if len(raw) != 32:
            raise UsageError(f"an Ed25519 public key is 32 bytes, not {len(raw)}")
        self._key = Ed25519PublicKey.from_public_bytes(raw)
        self.raw = raw

    @property
    def key_id(self) -> str:
        return hashlib.sha256(self.raw).hexdigest()[:16]

    def jwk(self) -> dict[str, str]:
        """The key as a JSON Web Key (RFC 8037), as served at /.well-known/jwks.json."""
        return {"kty": "OKP", "crv": "Ed25519", "x": _b64(self.raw), "kid": self.key_id, "alg": "EdDSA", "use": "sig"}

    def __str__(self) -> str:
        return _b64(self.raw)

    @classmethod
    def coerce(cls, key: Any) -> VerifyKey:
        """A VerifyKey from a SigningKey, a VerifyKey, a JWK dict, raw bytes, or base64url text."""
        if isinstance(key, VerifyKey):
            return key
        if isinstance(key, SigningKey):
            return key.verify_key
        if isinstance(key, dict):
            if key.get("kty") != "OKP" or key.get("crv") != "Ed25519" or "x" not in key:
                raise UsageError("a JWK for agreements has kty OKP, crv Ed25519 and x (see /.well-known/jwks.json)")
            return cls(_unb64(key["x"]))
        if isinstance(key, bytes):
            return cls(key)
        if isinstance(key, str):
            return cls(_unb64(key.strip()))
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

        if isinstance(key, Ed25519PublicKey):
            from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

            return cls(key.public_bytes(Encoding.Raw, PublicFormat.Raw))
        raise UsageError(
            f"cannot use a {type(key).__name__} as an agreement key: give the service's public key "
            "(base64url text, a JWK from /.well-known/jwks.json, or a SigningKey)"
        )


class SigningKey:
    """The service's Ed25519 private key. Keep it secret; publish :attr:`verify_key`."""

    def __init__(self, seed: bytes):
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
        from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

        if len(seed) != 32:
            raise UsageError(f"an Ed25519 signing key is a 32-byte seed, not {len(seed)} bytes")
        self._key = Ed25519PrivateKey.from_private_bytes(seed)
        self._seed = seed
        self.verify_key = VerifyKey(self._key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw))

    @classmethod
    def generate(cls) -> SigningKey:
        return cls(os.urandom(32))

    @classmethod
    def from_text(cls, text: str) -> SigningKey:
        """From the base64url 32-byte seed that :meth:`export` writes."""
        try:
            return cls(_unb64(text.strip()))
        except (ValueError, UsageError):
            raise UsageError(
                f"{SIGNING_KEY_ENV} must be a base64url 32-byte Ed25519 seed; make one with "
                "python -c 'from negotiator.agreements import SigningKey; print(SigningKey.generate().export())'"
            ) from None

    @classmethod
    def from_env(cls) -> SigningKey | None:
        text = os.environ.get(SIGNING_KEY_ENV, "").strip()
        return cls.from_text(text) if text else None

    def export(self) -> str:
        """The private seed as base64url text (what NEGOTIATOR_SIGNING_KEY holds)."""
        return _b64(self._seed)

    @property
    def key_id(self) -> str:
        return self.verify_key.key_id

    def sign(self, record: AgreementRecord) -> AgreementRecord:
        unsigned = record.model_copy(update={"signature": None})
        value = _b64(self._key.sign(unsigned.payload()))
        return unsigned.model_copy(update={"signature": Signature(key_id=self.key_id, value=value)})


def agreement_record(
    listing: Listing, session_id: str, terms: Offer, agreed_at: str, key: SigningKey
) -> AgreementRecord:
    """The signed record of a deal on ``listing`` at ``terms``."""
    issue = _price_issue(listing)
    price = unit = None
    if issue is not None:
        price = Money(amount=_amount(terms[issue.name], listing.currency), currency=listing.currency)
        unit = issue.unit.removeprefix(listing.currency).strip()
    record = AgreementRecord(
        listing_id=listing.id,
        session_id=session_id,
        product=listing.product.name,
        terms=dict(terms),
        price=price,
        price_issue=issue.name if issue else None,
        price_unit=unit or "",
        agreed_at=agreed_at,
    )
    return key.sign(record)


def verify_agreement(record: AgreementRecord | dict | str, key: Any) -> AgreementRecord:
    """Check ``record`` against the service's public ``key``; return it parsed, or raise InvalidAgreement.

    ``key``: the service's public key (base64url text, a JWK from ``/.well-known/jwks.json``,
    a :class:`VerifyKey` or :class:`SigningKey`).
    """
    from cryptography.exceptions import InvalidSignature

    try:
        if isinstance(record, str):
            parsed = AgreementRecord.model_validate_json(record)
        elif isinstance(record, dict):
            parsed = AgreementRecord.model_validate(record)
        else:
            parsed = record
    except ValidationError as e:
        err = e.errors()[0]
        raise InvalidAgreement(
            f"not an agreement record: {'.'.join(str(p) for p in err['loc'])}: {err['msg']}"
        ) from None
    if parsed.signature is None:
        raise InvalidAgreement("the record carries no signature")
    vk = VerifyKey.coerce(key)
    if parsed.signature.key_id != vk.key_id:
        raise InvalidAgreement(f"signed by key {parsed.signature.key_id}, not by this key ({vk.key_id})")
    try:
        signature = _unb64(parsed.signature.value)
    except UsageError:
        signature = b""
    if not signature or _b64(signature) != parsed.signature.value:
        # One agreement, one signature string: a checkout that keys on it must not see padded,
        # "+/" or other-trailing-bit spellings of the same bytes as other agreements.
        raise InvalidAgreement(
            "the signature is not in canonical base64url (no padding, '-_' alphabet, zero trailing bits)"
        )
    try:
        vk._key.verify(signature, parsed.payload())
    except (InvalidSignature, ValueError):
        raise InvalidAgreement("the signature does not match the record: it was changed after it was signed") from None
    return parsed


def _price_issue(listing: Listing) -> NumericIssue | None:
    for issue in listing.issues:
        if isinstance(issue, NumericIssue) and "price" in issue.name:
            return issue
    return None


def _amount(value: Any, currency: str) -> str:
    places = Decimal(1) if currency.upper() in _ZERO_DECIMAL else Decimal("0.01")
    return str(Decimal(repr(float(value))).quantize(places))


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (ValueError, TypeError):
        raise UsageError("not base64url text") from None


__all__ = [
    "AgreementRecord",
    "InvalidAgreement",
    "Money",
    "SIGNING_KEY_ENV",
    "Signature",
    "SigningKey",
    "VerifyKey",
    "agreement_record",
    "verify_agreement",
]
