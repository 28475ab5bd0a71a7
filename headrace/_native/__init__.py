"""Optional C extensions, built by ``setup.py`` when a C compiler and their libraries are present.

Nothing here may be required: every user imports a module inside ``try``/``except ImportError``
in one place and keeps a pure Python (or OpenCV / simplejpeg) path for when it is missing.
"""
