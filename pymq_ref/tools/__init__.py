"""Operator tools behind the ``pymq`` command (inspect, ...). They read stores, never write them
(except ``fill``, whose purpose is to write a test store through the real store code)."""
