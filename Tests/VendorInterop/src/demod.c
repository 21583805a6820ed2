/* vendorhost demod: replaced once the receive path is mapped. */
