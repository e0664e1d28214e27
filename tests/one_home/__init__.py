"""One Home Assistant with all three backends at once, and automations across them."""
