"""Helpers shared by the client's test modules (tests/client, tests/journal)."""


class Delegate:
    def __init__(self):
        self.events = []

    def wormhole_got_welcome(self, welcome):
        self.events.append(("welcome", welcome))

    def wormhole_got_code(self, code):
        self.events.append(("code", code))

    def wormhole_got_unverified_key(self, key):
        self.events.append(("key", key))

    def wormhole_got_verifier(self, verifier):
        self.events.append(("verifier", verifier))

    def wormhole_got_versions(self, versions):
        self.events.append(("versions", versions))

    def wormhole_got_message(self, msg):
        self.events.append(("message", msg))

    def wormhole_closed(self, result):
        self.events.append(("closed", result))
