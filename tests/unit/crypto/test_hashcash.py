"""wormhole._hashcash: Hashcash v1 stamps (Mailbox server protocol,
"Permission to Use the Server")."""

import hashlib
from datetime import datetime, timedelta, timezone

from hypothesis import given, settings
from hypothesis import strategies as st
from twisted.trial import unittest

from wormhole._hashcash import leading_zero_bits, mint, verify

SETTINGS = settings(max_examples=60, deadline=None)
# the example of Mailbox server protocol, "Permission to Use the Server",
# made by `hashcash -b 6 -m "resource-string"`
SPEC_STAMP = "1:6:210723:resource-string::NmZNF4eIbk87mqYz:000003n"
SPEC_DAY = datetime(2021, 7, 23, 12, 0, tzinfo=timezone.utc)
NOW = datetime(2026, 3, 14, 15, 9, 26, tzinfo=timezone.utc)
resources = st.text(min_size=1, max_size=30).filter(lambda r: ":" not in r)
dates = st.datetimes(
    min_value=datetime(2000, 1, 1), max_value=datetime(2099, 12, 31),
    timezones=st.just(timezone.utc)
)


def zero_bits(stamp):
    return leading_zero_bits(hashlib.sha1(stamp.encode("utf-8")).digest())


class LeadingZeroBits(unittest.TestCase):
    def test_counts(self):
        """leading_zero_bits counts zero bits from the most significant end."""
        self.assertEqual(leading_zero_bits(b"\x80"), 0)
        self.assertEqual(leading_zero_bits(b"\x01"), 7)
        self.assertEqual(leading_zero_bits(b"\x00\x10"), 11)
        self.assertEqual(leading_zero_bits(b"\x00\x00"), 16)


class SpecExample(unittest.TestCase):
    def test_spec_stamp_verifies(self):
        """The stamp quoted in the Mailbox server protocol (made by the hashcash tool) verifies
        on its day."""
        self.assertTrue(verify(SPEC_STAMP, "resource-string", 6, now=SPEC_DAY))

    def test_spec_stamp_expired(self):
        """The same stamp is refused years later (max_age)."""
        self.assertFalse(verify(SPEC_STAMP, "resource-string", 6, now=NOW))

    def test_spec_stamp_not_worth_more(self):
        """It claims 6 bits, so a server asking for 7 refuses it."""
        self.assertFalse(verify(SPEC_STAMP, "resource-string", 7, now=SPEC_DAY))


class MintVerify(unittest.TestCase):
    @SETTINGS
    @given(resources, st.integers(0, 12), dates)
    def test_round_trip(self, resource, bits, now):
        """A minted stamp is v1, names resource, bits and date, and verifies."""
        stamp = mint(resource, bits, now=now)
        fields = stamp.split(":")
        self.assertEqual(len(fields), 7)
        self.assertEqual(fields[:4], ["1", str(bits), now.strftime("%y%m%d"), resource])
        self.assertGreaterEqual(zero_bits(stamp), bits)
        self.assertTrue(verify(stamp, resource, bits, now=now))
        self.assertTrue(verify(stamp, resource, 0, now=now))  # worth at least what is asked

    def test_twenty_bits(self):
        """The default hashcash difficulty (20 bits) mints and verifies."""
        stamp = mint("twenty", 20, now=NOW)
        self.assertGreaterEqual(zero_bits(stamp), 20)
        self.assertTrue(verify(stamp, "twenty", 20, now=NOW))

    def test_random_salt(self):
        """Two stamps for the same resource and day differ (random RAND field)."""
        self.assertNotEqual(mint("r", 1, now=NOW), mint("r", 1, now=NOW))

    def test_default_now(self):
        """Without ``now`` both sides use the current UTC time."""
        self.assertTrue(verify(mint("r", 4), "r", 4))

    def test_mint_refuses_colon(self):
        """Mailbox server protocol, "Permission to Use the Server": the resource cannot
        contain ':'."""
        self.assertRaises(ValueError, mint, "a:b", 4)

    def test_bits_range(self):
        """bits must be 0..160 (SHA-1 has 160)."""
        self.assertRaises(ValueError, mint, "r", -1)
        self.assertRaises(ValueError, mint, "r", 161)
        self.assertRaises(ValueError, verify, SPEC_STAMP, "resource-string", 161)


class Refusals(unittest.TestCase):
    def setUp(self):
        self.stamp = mint("res", 8, now=NOW)

    def test_wrong_resource(self):
        """A stamp for another resource is refused."""
        self.assertFalse(verify(self.stamp, "other", 8, now=NOW))
        self.assertFalse(verify(self.stamp, "re", 8, now=NOW))

    def test_too_few_bits(self):
        """A stamp claiming fewer bits than required is refused."""
        self.assertFalse(verify(self.stamp, "res", 9, now=NOW))

    def test_age(self):
        """A YYMMDD stamp is good until max_age after the end of its day."""
        day = datetime(2026, 3, 14, tzinfo=timezone.utc)
        stamp = mint("res", 4, now=day)
        self.assertTrue(verify(stamp, "res", 4, now=day + timedelta(days=3, seconds=-1)))
        self.assertFalse(verify(stamp, "res", 4, now=day + timedelta(days=3, seconds=1)))
        self.assertTrue(
            verify(stamp, "res", 4, now=day + timedelta(days=5), max_age=timedelta(days=4))
        )

    def test_future(self):
        """A stamp dated more than a day ahead is refused; tomorrow's is taken."""
        self.assertTrue(verify(mint("res", 4, now=NOW + timedelta(days=1)), "res", 4, now=NOW))
        self.assertFalse(verify(mint("res", 4, now=NOW + timedelta(days=2)), "res", 4, now=NOW))

    def test_other_versions(self):
        """Only version 1 stamps are accepted (v0 and unknown versions are refused)."""
        for version in ["0", "2", "", "01"]:
            fields = self.stamp.split(":")
            fields[0] = version
            self.assertFalse(verify(":".join(fields), "res", 0, now=NOW), version)

    def test_malformed(self):
        """Wrong field counts, bad numbers, bad dates, empty or odd RAND/COUNTER are refused."""
        date = NOW.strftime("%y%m%d")
        for bad in [
            "",
            "1",
            self.stamp + ":extra",
            self.stamp.rsplit(":", 1)[0],
            f"1:x:{date}:res::abc:1",
            f"1:-1:{date}:res::abc:1",
            f"1:08:{date}:res::abc:1",
            f"1: 8:{date}:res::abc:1",
            f"1:161:{date}:res::abc:1",
            "1:0:261399:res::abc:1",
            "1:0:2603:res::abc:1",
            "1:0:26031x:res::abc:1",
            f"1:0:{date}:res:::1",
            f"1:0:{date}:res::abc:",
            f"1:0:{date}:res::a c:1",
            f"1:0:{date}:res::abc:\u00e9",
            f"1:0:{date}:res::abc:\ud800",
        ]:
            self.assertFalse(verify(bad, "res", 0, now=NOW), bad)
        self.assertFalse(verify(None, "res", 0, now=NOW))
        self.assertFalse(verify(b"1:0:260314:res::abc:1", "res", 0, now=NOW))

    def test_longer_date_forms(self):
        """YYMMDDhhmm and YYMMDDhhmmss dates are accepted too (hashcash v1 format)."""
        for date in [NOW.strftime("%y%m%d%H%M"), NOW.strftime("%y%m%d%H%M%S")]:
            self.assertTrue(verify(f"1:0:{date}:res::abc:1", "res", 0, now=NOW), date)

    @SETTINGS
    @given(st.integers(0, 20), st.integers(0, 20), st.text(alphabet="0123456789abcdef", min_size=1))
    def test_zero_bits_decide(self, claimed, required, counter):
        """For a well-formed stamp, verify is exactly: claimed >= required and the
        SHA-1 has the claimed zero bits (a stamp cannot overstate its work)."""
        stamp = f"1:{claimed}:{NOW:%y%m%d}:res::abc:{counter}"
        expected = claimed >= required and zero_bits(stamp) >= claimed
        self.assertEqual(verify(stamp, "res", required, now=NOW), expected)

    def test_overstated_claim(self):
        """Raising the claimed bits of a real stamp breaks it."""
        fields = self.stamp.split(":")
        fields[1] = "40"
        forged = ":".join(fields)
        self.assertLess(zero_bits(forged), 40)  # holds for this fixed stamp with ~1-2**-40
        self.assertFalse(verify(forged, "res", 8, now=NOW))

    def test_two_digit_year(self):
        """YY is read in the century nearest now: "69" is 2069 in 2069 (not 1969)."""
        day = datetime(2069, 1, 1, tzinfo=timezone.utc)
        self.assertTrue(verify(mint("res", 2, now=day), "res", 2, now=day))
        leap = datetime(2000, 2, 29, tzinfo=timezone.utc)
        self.assertTrue(verify(mint("res", 2, now=leap), "res", 2, now=leap))

    def test_naive_now_is_utc(self):
        """A naive ``now`` is read as UTC."""
        stamp = mint("res", 4, now=datetime(2026, 3, 14, 23, 30))
        self.assertIn(":260314:", stamp)
        self.assertTrue(verify(stamp, "res", 4, now=datetime(2026, 3, 14, 23, 30)))
