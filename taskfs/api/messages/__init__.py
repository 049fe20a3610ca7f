"""Messages: sending, reading threads, delivery and read marks, the inbox, a task's signed opening,
interlink's tools, its wire lines and the bus bridge."""
