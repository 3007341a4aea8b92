"""Two of our wormholes dilating through our Mailbox server on 127.0.0.1
(test_e2e.py, test_websocket.py)."""

from twisted.internet import defer, reactor

import wormhole

from .._ourmailbox import OurMailboxTestCase

APPID = "example.com/dilation-e2e"


class _Base(OurMailboxTestCase):
    @defer.inlineCallbacks
    def pair(self, **dilate_kwargs):
        w1 = wormhole.create(APPID, self.srv.url, reactor, dilation=True,
                             _reconnect_delay=0.05, _reconnect_max_delay=0.2)
        w2 = wormhole.create(APPID, self.srv.url, reactor, dilation=True,
                             _reconnect_delay=0.05, _reconnect_max_delay=0.2)
        self.close_later(w1, w2)
        w1.allocate_code()
        code = yield w1.get_code()
        w2.set_code(code)
        kw = {"_listen_addresses": ["127.0.0.1"]}
        kw.update(dilate_kwargs)
        d1 = w1.dilate(**kw)
        d2 = w2.dilate(**kw)
        return w1, w2, d1, d2
