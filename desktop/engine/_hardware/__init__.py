"""What llama.cpp runs on here: backend, devices, CPU features, AMX, layer placement, and
a missing shared library told as what to install.
"""
