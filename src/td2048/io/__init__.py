"""Files: run directories and logs, weight files. Everything is written atomically (temp + fsync + rename)."""
