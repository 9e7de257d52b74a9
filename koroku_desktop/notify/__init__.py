"""Desktop notifications: an adapter over `org.freedesktop.Notifications` on the session bus.

It depends on domain only; the composition root (`app/notifications.py`) wires it as the
agent's `Notifier` port and falls back to a log notifier where there is no session bus.
"""
