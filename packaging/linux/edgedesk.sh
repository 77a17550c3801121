#!/bin/sh
# /usr/bin/edgedesk: run the frozen app installed under /opt/edgedesk.
exec /opt/edgedesk/edgedesk "$@"
